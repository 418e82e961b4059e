import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, errorResponses, json, jsonBody, noContent, tokenOnly } from '../../openapi/common.js';
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

const KeyIdParams = z.object({ keyId: z.uuid() });

export function registerApiKeyPaths(registry: OpenAPIRegistry): void {
  const tags = ['API keys'];
  registry.registerPath({
    method: 'get',
    path: '/v1/api-keys',
    operationId: 'listApiKeys',
    ...access('developer_admin'),
    tags,
    summary: 'List the keys of the organizations where the caller is developer_admin',
    security: tokenOnly,
    request: { query: ListApiKeysQuery },
    responses: {
      200: json(z.object({ data: z.array(ApiKeyListItemSchema) }), 'The keys (never their values)'),
      ...errorResponses(400, 401, 403),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/api-keys',
    operationId: 'createApiKey',
    ...access('developer_admin'),
    tags,
    summary: 'Create a key; the raw value is returned once',
    security: tokenOnly,
    request: { body: jsonBody(CreateApiKeySchema) },
    responses: {
      201: json(CreatedApiKeySchema, 'The new key with its raw value'),
      ...errorResponses(400, 401, 403, 404),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/api-keys/{keyId}',
    operationId: 'getApiKey',
    ...access('developer_admin'),
    tags,
    summary: 'One key of your developer_admin organizations (never its value)',
    security: tokenOnly,
    request: { params: KeyIdParams },
    responses: { 200: json(ApiKeySchema, 'The key'), ...errorResponses(400, 401, 403, 404) },
  });
  registry.registerPath({
    method: 'patch',
    path: '/v1/api-keys/{keyId}',
    operationId: 'updateApiKey',
    ...access('developer_admin'),
    tags,
    summary:
      'Change name, permissions, agent scope, allowed IPs, limits, active status or expiry; acts on the next request',
    security: tokenOnly,
    request: { params: KeyIdParams, body: jsonBody(UpdateApiKeySchema) },
    responses: { 200: json(ApiKeySchema, 'The updated key'), ...errorResponses(400, 401, 403, 404) },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/api-keys/{keyId}/rotate',
    operationId: 'rotateApiKey',
    ...access('developer_admin'),
    tags,
    summary: 'Replace a key without downtime: a new key with the same settings; the old one expires after the overlap',
    description:
      "The new key has the old one's name, permissions, agent scope, limits and allowed IPs, and its raw value is " +
      'returned once. The old key keeps working for `overlap_seconds` (0: refused at once); both share one ' +
      'rate-limit budget. 409 when the key is inactive, expired or already rotated.',
    security: tokenOnly,
    request: { params: KeyIdParams, body: { ...jsonBody(RotateApiKeySchema), required: false } },
    responses: {
      201: json(CreatedApiKeySchema, "The new key with its raw value (ETag: the new key's)"),
      ...errorResponses(400, 401, 403, 404),
      409: { ...errorResponses(409)[409]!, description: 'CONFLICT: the key is inactive, expired or already rotated' },
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/v1/api-keys/{keyId}',
    operationId: 'deleteApiKey',
    ...access('developer_admin'),
    tags,
    summary: 'Delete a key permanently; refused from the next request on',
    security: tokenOnly,
    request: { params: KeyIdParams },
    responses: { 204: noContent, ...errorResponses(400, 401, 403, 404) },
  });
}
