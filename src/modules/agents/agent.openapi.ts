import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { AGENT_ROUTE_ERRORS, anyAuth, errorResponses, json, paginated, PaginationQuerySchema } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { AgentSchema } from './agent.schemas.js';

export const AgentIdParams = z.object({ agentId: z.uuid() });

export function registerAgentPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/agents',
    tags: ['Agents'],
    summary: 'List agents (agents:read), newest first, only agents the key may access',
    security: anyAuth,
    request: { query: PaginationQuerySchema },
    responses: { 200: json(paginated(AgentSchema), 'A page of agents'), ...errorResponses(400, 401, 403, 429) },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/agents/{agentId}',
    tags: ['Agents'],
    summary: 'Get one agent (agents:read)',
    security: anyAuth,
    request: { params: AgentIdParams },
    responses: { 200: json(AgentSchema, 'The agent'), ...errorResponses(...AGENT_ROUTE_ERRORS) },
  });
}
