import { paginationShape } from '../../api/pagination.js';
import { uuidField } from '../../api/validate.js';
import { paginationQueryDocShape, queryFlag } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { phoneNumberField } from '../../phone/phone-number.js';
import { text } from '../../validation/text.js';

export const PROVIDERS = ['sipgate', 'telekom', 'twilio', 'sip'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Write-only: sealed with SECRETS_KEY when stored, never returned or logged. */
export const SipCredentialsSchema = z
  .strictObject({
    termination_uri: text({ min: 1, max: 500, trim: true }).openapi({ example: 'sip:trunk.example.com' }),
    username: text({ min: 1, max: 200 }),
    password: text({ min: 1, max: 500 }),
  })
  .openapi('SipCredentials', {
    description: 'Write-only: stored encrypted (AES-256-GCM), never returned (`sip_configured` says whether set)',
  });

const label = text({ max: 200, trim: true }).nullable();
const provider = z.enum(PROVIDERS).nullable();

export const CreatePhoneNumberSchema = z
  .strictObject({
    number: phoneNumberField,
    label: label.optional(),
    provider: provider.optional(),
    sip: SipCredentialsSchema.nullable().optional(),
    agent_id: uuidField()
      .nullable()
      .optional()
      .openapi({ description: "The agent answering calls to the number; the agent's previous number is released" }),
    organization_id: uuidField()
      .optional()
      .openapi({ description: 'Required when the caller may write phone numbers in several organizations' }),
  })
  .openapi('PhoneNumberCreate');

export const UpdatePhoneNumberSchema = z
  .strictObject({
    label: label.optional(),
    provider: provider.optional(),
    sip: SipCredentialsSchema.nullable()
      .optional()
      .openapi({ description: 'Replaces the credentials; null removes them' }),
    agent_id: uuidField().nullable().optional().openapi({
      description:
        "Moves the agent onto this number (its previous number is released); null releases the number. A number that is an agent's only number cannot be released or moved away (409)",
    }),
  })
  .openapi('PhoneNumberUpdate');

export type PhoneNumberInput = z.output<typeof UpdatePhoneNumberSchema>;

export const ListPhoneNumbersQuery = z.object({
  ...paginationShape,
  agent_id: uuidField().optional(),
  assigned: z.enum(['true', 'false']).optional(),
});

export const ListPhoneNumbersQueryDoc = z.object({
  ...paginationQueryDocShape,
  agent_id: z.uuid().optional().openapi({ description: 'The number of this agent' }),
  assigned: queryFlag('Only numbers with (true) or without an agent'),
});

export const PhoneNumberSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    number: z.string().openapi({ description: 'E.164, unique across the service' }),
    label: z.string().nullable(),
    provider: z
      .enum(PROVIDERS)
      .nullable()
      .openapi({ description: 'null: not stated (numbers taken over from agents)' }),
    sip_configured: z.boolean().openapi({ description: 'Whether SIP credentials are stored (they are never shown)' }),
    agent_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('PhoneNumber');

export type PhoneNumber = z.infer<typeof PhoneNumberSchema>;
