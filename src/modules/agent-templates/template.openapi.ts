import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { operationGroup, resourceOperations } from '../../openapi/operations.js';
import { AgentTemplateSchema, CreateTemplateSchema } from './template.schemas.js';

export function registerTemplatePaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, { tags: ['Agents as code'], agentScope: 'none', errors: [401, 403, 429] });
  const templates = resourceOperations(register, {
    path: '/v1/agent-templates',
    permission: 'agents',
    operation: 'AgentTemplate',
    noun: 'template',
    schema: AgentTemplateSchema,
  });
  templates.list({ summary: 'The agent templates of every organization where the caller reads agents (agents:read)' });
  templates.create({
    summary: 'Save an agent template (agents:write)',
    description:
      'A bundle whose strings may hold `{{placeholders}}`, each a declared variable (a placeholder that is not one is a ' +
      '400 naming where it is). POST /v1/agents with `template_id` and `variables` creates an agent from it.',
    body: CreateTemplateSchema,
    response: 'The template',
    errors: [400, 404, 409, 413],
  });
  templates.delete({
    summary: 'Delete an agent template (agents:write); agents created from it stay',
    errors: [400, 404],
  });
}
