import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, anyAuth, errorResponses, json, jsonBody } from '../../openapi/common.js';
import { RouteAnswerSchema, RouteRequestSchema } from './route.schemas.js';

export function registerRuntimePaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/v1/runtime/route',
    operationId: 'routeCall',
    ...access('runtime:route', 'filtered'),
    tags: ['Runtime'],
    summary: 'Route an incoming call (runtime:route): who answers, why, and the configuration to run',
    description:
      'One answer for a voice runtime: the agent of the dialled number, the call decision of /status and /simulate (answered_by_agent_id, reason, via, the forwarding target), the configuration to run (agent fields, workflow, tools, the greeting for this caller, version id and number) and the experiment variant. Sees what a call sees: the greeting may name the caller from their contact. 404 for a number that is not registered, has no agent, or belongs to an organization out of reach.',
    security: anyAuth,
    request: { body: jsonBody(RouteRequestSchema) },
    responses: {
      200: json(RouteAnswerSchema, 'The routing answer'),
      ...errorResponses(400, 401, 403, 404, 413, 429),
    },
  });
}
