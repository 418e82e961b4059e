import { ROLES } from '../../auth/permissions.js';
import { MEMBER_URL_EVENT_TYPES } from '../../events/event-recorder.js';
import { z } from '../../openapi/zod.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';
import { text } from '../../validation/text.js';

export const MeSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    webhook_url: z.string().nullable().openapi({
      description:
        'Receives the events listed in webhook_events of every organization the user belongs to; null = none',
    }),
    webhook_events: z.array(z.enum(MEMBER_URL_EVENT_TYPES)).openapi({
      description: 'Event types sent to webhook_url (default: employee.forwarding_created)',
    }),
    webhook_retries: z.boolean().openapi({
      description: 'Failed deliveries to webhook_url are retried (Standard Webhooks schedule); default false',
    }),
    organizations: z.array(z.object({ organization_id: z.uuid(), role: z.enum(ROLES) })),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Me');

/** Unknown fields are ignored (docs/decisions.md); the URL passes the outgoing-request guard's save-time check. */
export function updateMeSchema(allowPrivate: boolean) {
  return z
    .object({
      name: text({ min: 1, max: 255, trim: true }).optional(),
      webhook_url: text({ max: 2048 })
        .superRefine((value, ctx) => {
          const problem = outgoingUrlProblem(value, { allowPrivate });
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .nullable()
        .optional()
        .openapi({
          description: 'http(s) URL for employee webhooks, or null to stop them',
          example: 'https://hooks.example.com/employees',
        }),
      webhook_events: z
        .array(z.enum(MEMBER_URL_EVENT_TYPES, { message: `Must be one of: ${MEMBER_URL_EVENT_TYPES.join(', ')}` }))
        .max(MEMBER_URL_EVENT_TYPES.length)
        .refine((list) => new Set(list).size === list.length, 'An event type is listed twice')
        .optional()
        .openapi({
          description: 'Event types sent to webhook_url; an empty list stops them without removing the URL',
          example: ['employee.forwarding_created', 'kb.document.failed'],
        }),
      webhook_retries: z.boolean().optional().openapi({
        description:
          'Retry a failed delivery to webhook_url after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h with the same webhook-id (default false: one attempt)',
      }),
    })
    .openapi('UpdateMe');
}
