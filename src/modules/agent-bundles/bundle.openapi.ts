import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Permission } from '../../auth/permissions.js';
import { json, jsonBody } from '../../openapi/common.js';
import { agentOperations } from '../../openapi/operations.js';
import { AgentSchema } from '../agents/agent.schemas.js';
import {
  AgentBundleSchema,
  ApplyBundleBodySchema,
  BundleChangesSchema,
  CloneAgentBodySchema,
  DryRunQuerySchema,
  ImportBundleBodySchema,
} from './bundle.schemas.js';

type Permissions = readonly [Permission, ...Permission[]];
export const READS: Permissions = ['agents:read', 'tools:read', 'employees:read', 'forwarding:read', 'kb:read'];
export const WRITES: Permissions = ['agents:write', 'tools:write', 'employees:write', 'forwarding:write', 'kb:write'];
const CLONE: Permissions = [...READS, 'agents:write'];

const dryRunAnswer = json(BundleChangesSchema, 'Dry run (`Dry-Run: true`): what would be created, nothing stored');

export function registerBundlePaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Agents as code');
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/bundle',
    operationId: 'getAgentBundle',
    permission: READS,
    summary: 'The whole agent as one document (agents:read, tools:read, employees:read, forwarding:read, kb:read)',
    description:
      'Configuration, workflow, tools, employees, forwarding slots, analysis fields, schedule exceptions, test cases, ' +
      'the own knowledge-base documents (content and client chunks) and the titles of the granted organization ' +
      'documents. No ids of this installation: other agents, employees and documents are named. Credentials (tool ' +
      'headers and query parameters named like one, URLs with a user, password or token) are `{"$secret": name}`. ' +
      '`Accept: application/yaml` answers YAML. The ETag is what `If-Match` of PUT .../bundle takes.',
    responses: {
      200: {
        description: 'The bundle',
        content: {
          'application/json': { schema: AgentBundleSchema },
          'application/yaml': { schema: AgentBundleSchema },
        },
      },
    },
  });
  register({
    method: 'put',
    path: '/v1/agents/{agentId}/bundle',
    operationId: 'applyAgentBundle',
    permission: WRITES,
    summary:
      'Make the agent equal to a bundle (agents:write, tools:write, employees:write, forwarding:write, kb:write)',
    description:
      'One transaction, one configuration version, one audit entry; answers the changes (`path`, `op`, `from`, `to`; ' +
      'lists keyed by name). A field that cannot be stored is a 400 naming it, nothing is dropped. Secret placeholders ' +
      'take their value from `secrets` or keep the stored one. `If-Match` takes the ETag of GET .../bundle; ' +
      '`dry_run=true` answers the changes and stores nothing; require_passing_test_cases applies as to a PATCH.',
    request: { body: jsonBody(ApplyBundleBodySchema) },
    responses: {
      200: json(BundleChangesSchema, 'What changed (or would change, in a dry run)'),
    },
    errors: [409, 412, 413],
  });
  register({
    method: 'post',
    path: '/v1/agents/import',
    operationId: 'importAgentBundle',
    permission: WRITES,
    agentScope: 'unrestricted',
    summary: 'Create an agent from a bundle (agents:write, tools:write, employees:write, forwarding:write, kb:write)',
    description:
      "The bundle with the new agent's `phone_number` (numbers are not in bundles), optionally `organization_id` and " +
      '`secrets`. Names (backup agent, switch_agent targets, organization documents) must exist in the organization.',
    request: { query: DryRunQuerySchema, body: jsonBody(ImportBundleBodySchema) },
    responses: {
      201: json(AgentSchema, 'The new agent'),
      200: dryRunAnswer,
    },
    errors: [409, 413],
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/clone',
    operationId: 'cloneAgent',
    permission: CLONE,
    summary: 'Copy the agent (agents:read, tools:read, employees:read, forwarding:read, kb:read, agents:write)',
    description:
      "The reads in the source, agents:write in the target (`organization_id`, default: the source's). The copy " +
      'takes `name` and `phone_number`; its credentials come along; names it references must exist in the target.',
    request: { query: DryRunQuerySchema, body: jsonBody(CloneAgentBodySchema) },
    responses: {
      201: json(AgentSchema, 'The copy'),
      200: dryRunAnswer,
    },
    errors: [409, 413],
  });
}
