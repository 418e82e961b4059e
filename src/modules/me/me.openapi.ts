import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, errorResponses, json, jsonBody, tokenOnly } from '../../openapi/common.js';
import { MeSchema, updateMeSchema } from './me.schemas.js';

export function registerMePaths(registry: OpenAPIRegistry): void {
  const tags = ['Me'];
  registry.registerPath({
    method: 'get',
    path: '/v1/me',
    operationId: 'getMe',
    ...access('signed_in'),
    tags,
    summary: 'The signed-in user: profile, memberships and webhook URL (dashboard token only)',
    security: tokenOnly,
    responses: { 200: json(MeSchema, 'The user'), ...errorResponses(401) },
  });
  registry.registerPath({
    method: 'patch',
    path: '/v1/me',
    operationId: 'updateMe',
    ...access('signed_in'),
    tags,
    summary: 'Set your name or the webhook URL that receives employee.forwarding_created (dashboard token only)',
    security: tokenOnly,
    request: { body: jsonBody(updateMeSchema(false)) },
    responses: { 200: json(MeSchema, 'The updated user'), ...errorResponses(400, 401) },
  });
}
