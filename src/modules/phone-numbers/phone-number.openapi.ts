import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { operationGroup, resourceOperations } from '../../openapi/operations.js';
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
  const numbers = resourceOperations(register, {
    path: '/v1/phone-numbers',
    permission: 'phone_numbers',
    operation: 'PhoneNumber',
    noun: 'phone number',
    param: 'numberId',
    schema: PhoneNumberSchema,
  });
  numbers.list({
    summary: 'List phone numbers (phone_numbers:read) of every organization the caller reads them in, oldest first',
    query: ListPhoneNumbersQueryDoc,
  });
  numbers.create({
    agentScope: 'unrestricted',
    summary: 'Register a phone number (phone_numbers:write); 409 when the number is registered anywhere',
    description:
      'SIP credentials are write-only (stored encrypted, never returned). `agent_id` moves that agent onto the number and releases its previous one. 503 when the server has no SECRETS_KEY and `sip` is sent.',
    body: CreatePhoneNumberSchema,
    errors: [404, 409, 413, 503],
  });
  numbers.get({ summary: 'Get one phone number (phone_numbers:read)', errors: [404] });
  numbers.update({
    agentScope: 'unrestricted',
    summary: 'Change a phone number (phone_numbers:write): label, provider, SIP credentials, the agent it rings',
    description:
      '409 when the change would leave an agent without a number (its only number released or moved away): assign the agent another number first.',
    body: UpdatePhoneNumberSchema,
    response: 'The changed phone number',
    errors: [404, 409, 413, 503],
  });
  numbers.delete({
    agentScope: 'unrestricted',
    summary: "Delete a phone number (phone_numbers:write); 409 while it is an agent's only number",
    errors: [404, 409],
  });
}
