import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { errorResponses, json, jsonBody, tokenOnly } from '../../openapi/common.js';
import { operationGroup, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  ApiKeyListItemSchema,
  ApiKeySchema,
  CreateApiKeySchema,
  CreatedApiKeySchema,
  ListApiKeysQuery,
  RotateApiKeySchema,
  UpdateApiKeySchema,
} from './api-key.schemas.js';

export function registerApiKeyPaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, {
    tags: ['API keys'],
    security: tokenOnly,
    agentScope: 'none',
    errors: [400, 401, 403],
  });
  register({
    method: 'get',
    path: '/v1/api-keys',
    operationId: 'listApiKeys',
    permission: 'developer_admin',
    summary: 'List the keys of the organizations where the caller is developer_admin',
    request: { query: ListApiKeysQuery },
    responses: {
      200: json(z.object({ data: z.array(ApiKeyListItemSchema) }), 'The keys (never their values)'),
    },
  });
  register({
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'createApiKey',
    permission: 'developer_admin',
    summary: 'Create a key; the raw value is returned once',
    request: { body: jsonBody(CreateApiKeySchema) },
    responses: {
      201: json(CreatedApiKeySchema, 'The new key with its raw value'),
    },
    errors: [404],
  });
  const keys = resourceOperations(register, {
    path: '/v1/api-keys',
    permission: 'developer_admin',
    operation: 'ApiKey',
    noun: 'key',
    schema: ApiKeySchema,
  });
  keys.get({ summary: 'One key of your developer_admin organizations (never its value)', errors: [404] });
  keys.update({
    summary:
      'Change name, permissions, agent scope, allowed IPs, limits, active status or expiry; acts on the next request',
    body: UpdateApiKeySchema,
    errors: [404],
  });
  register({
    method: 'post',
    path: '/v1/api-keys/{keyId}/rotate',
    operationId: 'rotateApiKey',
    permission: 'developer_admin',
    summary: 'Replace a key without downtime: a new key with the same settings; the old one expires after the overlap',
    description:
      "The new key has the old one's name, permissions, agent scope, limits and allowed IPs, and its raw value is " +
      'returned once. The old key keeps working for `overlap_seconds` (0: refused at once); both share one ' +
      'rate-limit budget. 409 when the key is inactive, expired or already rotated.',
    request: { body: { ...jsonBody(RotateApiKeySchema), required: false } },
    responses: {
      201: json(CreatedApiKeySchema, "The new key with its raw value (ETag: the new key's)"),
      409: { ...errorResponses(409)[409]!, description: 'CONFLICT: the key is inactive, expired or already rotated' },
    },
    errors: [404],
  });
  keys.delete({ summary: 'Delete a key permanently; refused from the next request on', errors: [404] });
}
