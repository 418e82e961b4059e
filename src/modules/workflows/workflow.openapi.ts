import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody } from '../../openapi/common.js';
import { agentOperations } from '../../openapi/operations.js';
import { WorkflowPutBodySchema, WorkflowRecordSchema } from './workflow.schemas.js';

export function registerWorkflowPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Workflow');
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/workflow',
    operationId: 'getWorkflow',
    permission: 'agents:read',
    summary: "The agent's workflow (agents:read); workflow is null for a single-prompt agent",
    responses: { 200: json(WorkflowRecordSchema, 'The workflow record') },
  });
  register({
    method: 'put',
    path: '/v1/agents/{agentId}/workflow',
    operationId: 'replaceWorkflow',
    permission: 'agents:write',
    summary:
      'Replace the workflow (agents:write): the Workflow itself, {workflow: Workflow}, or {workflow: null} to remove it',
    description:
      'Validated completely (limits, unknown keys, unique step ids, next naming other existing steps, tools naming tools of ' +
      'the agent, a terminal step, every step reachable from the first). Every problem is listed in one 400 with paths ' +
      'relative to the workflow, such as `steps[1].next[0].id`; nothing is written.',
    request: { body: jsonBody(WorkflowPutBodySchema) },
    responses: { 200: json(WorkflowRecordSchema, 'The workflow record') },
    errors: [413],
  });
}
