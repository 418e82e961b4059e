import { z } from '../../openapi/zod.js';
import { text } from '../../validation/text.js';

export const OrganizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    auto_delete_done_calls: z.boolean(),
    cascade_done_same_number: z.boolean(),
    calendar_status_update: z.boolean(),
    forward_call_email: z.boolean(),
    transfer_popup_enabled: z.boolean(),
    notdienst_bereiche: z
      .array(z.string())
      .nullable()
      .openapi({ description: 'Emergency-duty areas; null = one emergency service for everything' }),
    max_concurrent_calls: z.number().int().nullable().openapi({ description: 'Read-only; null = unlimited' }),
    concurrency_overflow_number: z
      .string()
      .nullable()
      .openapi({ description: 'Read-only; where calls over the limit go (E.164); null = busy tone' }),
    require_if_match: z.boolean().openapi({
      description:
        'Configuration writes (PATCH, PUT, DELETE) without If-Match are refused with 428 PRECONDITION_REQUIRED',
    }),
    call_retention_days: z.number().int().openapi({
      description:
        "Days after which calls lose their personal data (1 to 3650, default 90); an agent's retention_days overrides it",
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Organization');

/** PATCH body (docs/decisions.md); like other non-agent PATCH endpoints, unknown fields are ignored. */
export const OrganizationPatchSchema = z
  .object({
    auto_delete_done_calls: z.boolean().optional(),
    cascade_done_same_number: z
      .boolean()
      .optional()
      .openapi({ description: 'Marking a call done also marks the open calls from the same number' }),
    calendar_status_update: z
      .boolean()
      .optional()
      .openapi({ description: 'Employee status follows their connected calendars' }),
    forward_call_email: z.boolean().optional().openapi({ description: 'Calls may be forwarded by e-mail' }),
    transfer_popup_enabled: z
      .boolean()
      .optional()
      .openapi({ description: 'Employees see a caller card with the transcript on transfer' }),
    notdienst_bereiche: z
      .array(text({ min: 1, max: 200, trim: true }))
      .max(100, 'Must have at most 100 items')
      .nullable()
      .transform((items) => [...new Set(items ?? [])])
      .optional()
      .openapi({ description: 'Emergency-duty areas; trimmed, duplicates removed; [] or null = none' }),
    require_if_match: z
      .boolean()
      .optional()
      .openapi({ description: 'true: configuration writes without If-Match get 428 PRECONDITION_REQUIRED' }),
    call_retention_days: z
      .number()
      .int('Must be an integer')
      .min(1, 'Must be between 1 and 3650')
      .max(3650, 'Must be between 1 and 3650')
      .optional()
      .openapi({
        description: "Days calls keep their personal data (1 to 3650); an agent's retention_days overrides it",
      }),
  })
  .openapi('OrganizationPatch');
