import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, paginated, PaginationQuerySchema } from '../../openapi/common.js';
import { agentOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { AgentVersionDiffSchema, AgentVersionSchema, AgentVersionSummarySchema } from './agent-version.schemas.js';

const agentId = z.uuid();
const version = z.string().openapi({ description: 'Version number (integer >= 1)', example: '3' });

export function registerAgentVersionPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Agent versions');
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/versions',
    operationId: 'listAgentVersions',
    permission: 'agents:read',
    summary: 'Configuration versions of the agent, newest first (agents:read)',
    description:
      'A version is recorded by every successful change of the configuration: agent PATCH (fields, greeting variants, schedule), workflow PUT, tool create/update/delete, and restore.',
    request: { params: z.object({ agentId }), query: PaginationQuerySchema },
    responses: {
      200: json(paginated(AgentVersionSummarySchema), 'A page of versions (without configurations)'),
    },
  });
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/versions/{version}',
    operationId: 'getAgentVersion',
    permission: 'agents:read',
    summary: 'One version with its full configuration (agents:read)',
    request: { params: z.object({ agentId, version }) },
    responses: { 200: json(AgentVersionSchema, 'The version') },
  });
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/versions/{from}/diff/{to}',
    operationId: 'diffAgentVersions',
    permission: 'agents:read',
    summary: 'What changed from one version to another (agents:read)',
    request: { params: z.object({ agentId, from: version, to: version }) },
    responses: { 200: json(AgentVersionDiffSchema, 'The changes') },
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/versions/{version}/restore',
    operationId: 'restoreAgentVersion',
    permission: 'agents:write',
    summary: "Make a version's configuration current again (agents:write; tools:write when tools change)",
    description:
      'One transaction, recorded as a new version (`change: version.restored`). Agent fields, tools and workflow go through the same rules as their own routes; tools deleted since are recreated with their ids, tools added since are removed. 409 lists every reason the version no longer passes (e.g. an employee or backup agent deleted since); nothing changes then.',
    request: { params: z.object({ agentId, version }) },
    responses: {
      201: json(AgentVersionSchema, 'The new version, now current'),
    },
    errors: [409],
  });
}
