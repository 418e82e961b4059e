import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, anyAuth, errorResponses, json, jsonBody, noContent, paginated } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import {
  CreatePhoneNumberSchema,
  ListPhoneNumbersQueryDoc,
  PhoneNumberSchema,
  UpdatePhoneNumberSchema,
} from './phone-number.schemas.js';

const NumberParams = z.object({ numberId: z.uuid() });

export function registerPhoneNumberPaths(registry: OpenAPIRegistry): void {
  const tags = ['Phone numbers'];
  const base = '/v1/phone-numbers';
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listPhoneNumbers',
    ...access('phone_numbers:read', 'none'),
    tags,
    summary: 'List phone numbers (phone_numbers:read) of every organization the caller reads them in, oldest first',
    security: anyAuth,
    request: { query: ListPhoneNumbersQueryDoc },
    responses: {
      200: json(paginated(PhoneNumberSchema), 'A page of phone numbers'),
      ...errorResponses(400, 401, 403, 429),
    },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'createPhoneNumber',
    ...access('phone_numbers:write', 'unrestricted'),
    tags,
    summary: 'Register a phone number (phone_numbers:write); 409 when the number is registered anywhere',
    description:
      'SIP credentials are write-only (stored encrypted, never returned). `agent_id` moves that agent onto the number and releases its previous one. 503 when the server has no SECRETS_KEY and `sip` is sent.',
    security: anyAuth,
    request: { body: jsonBody(CreatePhoneNumberSchema) },
    responses: {
      201: json(PhoneNumberSchema, 'The new phone number'),
      ...errorResponses(400, 401, 403, 404, 409, 413, 429, 503),
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{numberId}`,
    operationId: 'getPhoneNumber',
    ...access('phone_numbers:read', 'none'),
    tags,
    summary: 'Get one phone number (phone_numbers:read)',
    security: anyAuth,
    request: { params: NumberParams },
    responses: { 200: json(PhoneNumberSchema, 'The phone number'), ...errorResponses(400, 401, 403, 404, 429) },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{numberId}`,
    operationId: 'updatePhoneNumber',
    ...access('phone_numbers:write', 'unrestricted'),
    tags,
    summary: 'Change a phone number (phone_numbers:write): label, provider, SIP credentials, the agent it rings',
    description:
      '409 when the change would leave an agent without a number (its only number released or moved away): assign the agent another number first.',
    security: anyAuth,
    request: { params: NumberParams, body: jsonBody(UpdatePhoneNumberSchema) },
    responses: {
      200: json(PhoneNumberSchema, 'The changed phone number'),
      ...errorResponses(400, 401, 403, 404, 409, 413, 429, 503),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: `${base}/{numberId}`,
    operationId: 'deletePhoneNumber',
    ...access('phone_numbers:write', 'unrestricted'),
    tags,
    summary: "Delete a phone number (phone_numbers:write); 409 while it is an agent's only number",
    security: anyAuth,
    request: { params: NumberParams },
    responses: { 204: noContent, ...errorResponses(400, 401, 403, 404, 409, 429) },
  });
}
