import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, anyAuth, errorResponses, json, jsonBody, noContent } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { AgentTemplateSchema, CreateTemplateSchema } from './template.schemas.js';

export function registerTemplatePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/agent-templates',
    operationId: 'listAgentTemplates',
    ...access('agents:read', 'none'),
    tags: ['Agents as code'],
    summary: 'The agent templates of every organization where the caller reads agents (agents:read)',
    security: anyAuth,
    responses: {
      200: json(z.object({ data: z.array(AgentTemplateSchema) }), 'The templates'),
      ...errorResponses(401, 403, 429),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/agent-templates',
    operationId: 'createAgentTemplate',
    ...access('agents:write', 'none'),
    tags: ['Agents as code'],
    summary: 'Save an agent template (agents:write)',
    description:
      'A bundle whose strings may hold `{{placeholders}}`, each a declared variable (a placeholder that is not one is a ' +
      '400 naming where it is). POST /v1/agents with `template_id` and `variables` creates an agent from it.',
    security: anyAuth,
    request: { body: jsonBody(CreateTemplateSchema) },
    responses: {
      201: json(AgentTemplateSchema, 'The template'),
      ...errorResponses(400, 401, 403, 404, 409, 413, 429),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/agent-templates/{templateId}',
    operationId: 'deleteAgentTemplate',
    ...access('agents:write', 'none'),
    tags: ['Agents as code'],
    summary: 'Delete an agent template (agents:write); agents created from it stay',
    security: anyAuth,
    request: { params: z.object({ templateId: z.uuid() }) },
    responses: { 204: noContent, ...errorResponses(400, 401, 403, 404, 429) },
  });
}
