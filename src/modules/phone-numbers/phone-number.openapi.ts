import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, noContent, paginated } from '../../openapi/common.js';
import { operationGroup } from '../../openapi/operations.js';
import {
  CreatePhoneNumberSchema,
  ListPhoneNumbersQueryDoc,
  PhoneNumberSchema,
  UpdatePhoneNumberSchema,
} from './phone-number.schemas.js';

export function registerPhoneNumberPaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, {
    tags: ['Phone numbers'],
    agentScope: 'none',
    errors: [400, 401, 403, 429],
  });
  const base = '/v1/phone-numbers';
  register({
    method: 'get',
    path: base,
    operationId: 'listPhoneNumbers',
    permission: 'phone_numbers:read',
    summary: 'List phone numbers (phone_numbers:read) of every organization the caller reads them in, oldest first',
    request: { query: ListPhoneNumbersQueryDoc },
    responses: {
      200: json(paginated(PhoneNumberSchema), 'A page of phone numbers'),
    },
  });
  register({
    method: 'post',
    path: base,
    operationId: 'createPhoneNumber',
    permission: 'phone_numbers:write',
    agentScope: 'unrestricted',
    summary: 'Register a phone number (phone_numbers:write); 409 when the number is registered anywhere',
    description:
      'SIP credentials are write-only (stored encrypted, never returned). `agent_id` moves that agent onto the number and releases its previous one. 503 when the server has no SECRETS_KEY and `sip` is sent.',
    request: { body: jsonBody(CreatePhoneNumberSchema) },
    responses: {
      201: json(PhoneNumberSchema, 'The new phone number'),
    },
    errors: [404, 409, 413, 503],
  });
  register({
    method: 'get',
    path: `${base}/{numberId}`,
    operationId: 'getPhoneNumber',
    permission: 'phone_numbers:read',
    summary: 'Get one phone number (phone_numbers:read)',
    responses: { 200: json(PhoneNumberSchema, 'The phone number') },
    errors: [404],
  });
  register({
    method: 'patch',
    path: `${base}/{numberId}`,
    operationId: 'updatePhoneNumber',
    permission: 'phone_numbers:write',
    agentScope: 'unrestricted',
    summary: 'Change a phone number (phone_numbers:write): label, provider, SIP credentials, the agent it rings',
    description:
      '409 when the change would leave an agent without a number (its only number released or moved away): assign the agent another number first.',
    request: { body: jsonBody(UpdatePhoneNumberSchema) },
    responses: {
      200: json(PhoneNumberSchema, 'The changed phone number'),
    },
    errors: [404, 409, 413, 503],
  });
  register({
    method: 'delete',
    path: `${base}/{numberId}`,
    operationId: 'deletePhoneNumber',
    permission: 'phone_numbers:write',
    agentScope: 'unrestricted',
    summary: "Delete a phone number (phone_numbers:write); 409 while it is an agent's only number",
    responses: { 204: noContent },
    errors: [404, 409],
  });
}
