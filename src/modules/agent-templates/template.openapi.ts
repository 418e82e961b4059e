import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, noContent } from '../../openapi/common.js';
import { operationGroup } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { AgentTemplateSchema, CreateTemplateSchema } from './template.schemas.js';

export function registerTemplatePaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, { tags: ['Agents as code'], agentScope: 'none', errors: [401, 403, 429] });
  register({
    method: 'get',
    path: '/v1/agent-templates',
    operationId: 'listAgentTemplates',
    permission: 'agents:read',
    summary: 'The agent templates of every organization where the caller reads agents (agents:read)',
    responses: {
      200: json(z.object({ data: z.array(AgentTemplateSchema) }), 'The templates'),
    },
  });
  register({
    method: 'post',
    path: '/v1/agent-templates',
    operationId: 'createAgentTemplate',
    permission: 'agents:write',
    summary: 'Save an agent template (agents:write)',
    description:
      'A bundle whose strings may hold `{{placeholders}}`, each a declared variable (a placeholder that is not one is a ' +
      '400 naming where it is). POST /v1/agents with `template_id` and `variables` creates an agent from it.',
    request: { body: jsonBody(CreateTemplateSchema) },
    responses: {
      201: json(AgentTemplateSchema, 'The template'),
    },
    errors: [400, 404, 409, 413],
  });
  register({
    method: 'delete',
    path: '/v1/agent-templates/{templateId}',
    operationId: 'deleteAgentTemplate',
    permission: 'agents:write',
    summary: 'Delete an agent template (agents:write); agents created from it stay',
    responses: { 204: noContent },
    errors: [400, 404],
  });
}
