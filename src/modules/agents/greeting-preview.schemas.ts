import { z } from '../../openapi/zod.js';
import { E164 } from './agent-input.schemas.js';
import { text } from '../../validation/text.js';

export const GreetingPreviewRequestSchema = z
  .strictObject({
    caller_phone: z
      .string()
      .transform((v) => v.replace(/[\s\-().]/g, ''))
      .pipe(z.string().regex(E164, 'Must be an E.164 phone number such as +4930123456'))
      .optional()
      .openapi({
        type: 'string',
        example: '+4930123456',
        description: "The caller's number; finds the caller's contact",
      }),
    at: z.iso
      .datetime({ offset: true, message: 'Must be an ISO 8601 date-time' })
      .optional()
      .openapi({ description: 'When the call arrives (default: now)', example: '2026-11-23T08:30:00+01:00' }),
    variables: z
      .record(text({ max: 100 }), z.union([text({ max: 2000 }), z.number(), z.boolean(), z.null()]))
      .optional()
      .openapi({ description: 'Pre-call variables for placeholders such as {{firma}}', example: { firma: 'Acme' } }),
    calls_today: z
      .number()
      .int('Must be an integer')
      .min(0, 'Must be at least 0')
      .optional()
      .openapi({ description: "Overrides the count of the caller's calls today" }),
  })
  .openapi('GreetingPreviewRequest');

export const GreetingPreviewSchema = z
  .object({
    agent_id: z.uuid(),
    at: z.iso.datetime(),
    local_time: z.string().openapi({ description: 'HH:mm in Europe/Berlin, as time windows compare it' }),
    caller_phone: z.string().nullable(),
    contact: z
      .object({
        id: z.uuid(),
        first_name: z.string().nullable(),
        last_name: z.string().nullable(),
        salutation: z.string().nullable(),
        tags: z.array(z.string()),
      })
      .nullable()
      .openapi({ description: "The caller's contact; null without one, and always null without contacts:read" }),
    calls_today: z.number().int().nullable().openapi({
      description: "The caller's calls today (or the request's `calls_today`); null when counted without calls:read",
    }),
    calls_today_source: z.enum(['request', 'calls']),
    greeting: z.string().nullable().openapi({ description: 'The greeting that would be spoken, placeholders filled' }),
    source: z.enum(['variant', 'default', 'none']),
    variant_index: z.number().int().nullable(),
    variants: z.array(z.object({ index: z.number().int(), matched: z.boolean(), reasons: z.array(z.string()) })),
    missing_placeholders: z.array(z.string()),
  })
  .openapi('GreetingPreview');
