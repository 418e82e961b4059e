import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import { CreateToolDoc, ToolSchema, UpdateToolDoc } from './tool.schemas.js';

export function registerToolPaths(registry: OpenAPIRegistry): void {
  const tools = resourceOperations(agentOperations(registry, 'Tools'), {
    path: '/v1/agents/{agentId}/tools',
    permission: 'tools',
    operation: 'Tool',
    schema: ToolSchema,
  });
  tools.list({
    summary: 'List the tools of an agent (tools:read), not paginated, highest priority (lowest number) first',
  });
  tools.create({
    summary: 'Create a tool (tools:write); config is validated against the schema of its tool_type',
    body: CreateToolDoc,
    errors: [409],
  });
  tools.get({ summary: 'Get one tool (tools:read)' });
  tools.update({
    summary:
      'Update a tool (tools:write); tool_type cannot change; 409 on a taken name or a rename while the workflow names the tool',
    body: UpdateToolDoc,
    errors: [409],
  });
  tools.delete({ summary: "Delete a tool (tools:write); 409 while the agent's workflow names it", errors: [409] });
}
