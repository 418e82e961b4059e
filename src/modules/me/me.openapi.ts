import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, tokenOnly } from '../../openapi/common.js';
import { operationGroup } from '../../openapi/operations.js';
import { MeSchema, updateMeSchema } from './me.schemas.js';

export function registerMePaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, { tags: ['Me'], security: tokenOnly, agentScope: 'none', errors: [401] });
  register({
    method: 'get',
    path: '/v1/me',
    operationId: 'getMe',
    permission: 'signed_in',
    summary: 'The signed-in user: profile, memberships and webhook URL (dashboard token only)',
    responses: { 200: json(MeSchema, 'The user') },
  });
  register({
    method: 'patch',
    path: '/v1/me',
    operationId: 'updateMe',
    permission: 'signed_in',
    summary: 'Set your name or the webhook URL that receives employee.forwarding_created (dashboard token only)',
    request: { body: jsonBody(updateMeSchema(false)) },
    responses: { 200: json(MeSchema, 'The updated user') },
    errors: [400],
  });
}
