import { ROLES } from '../../auth/permissions.js';
import { z } from '../../openapi/zod.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';

export const MeSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    webhook_url: z.string().nullable().openapi({
      description: 'Receives employee.forwarding_created events of every organization the user belongs to; null = none',
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
      name: z.string().trim().min(1).max(255).optional(),
      webhook_url: z
        .string()
        .max(2048)
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
    })
    .openapi('UpdateMe');
}
