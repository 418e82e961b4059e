import { uuidField } from '../../api/validate.js';
import { z } from '../../openapi/zod.js';

/** What a test ping answers: the receiver's outcome, nothing stored. */
export const WebhookTestResultSchema = z
  .object({
    delivered: z.boolean().openapi({ description: 'true when the receiver answered with a 2xx status' }),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status; null when no answer came (refused, timeout, network)" }),
    duration_ms: z.number().int().openapi({ description: 'How long the request took' }),
    error: z.string().nullable().openapi({
      description:
        'Why it was not delivered: `HTTP 500`, `Redirect not followed (…)`, `Timed out after 5000 ms`, `Refused: …` (the outgoing-request guard) or a network error; null when delivered',
    }),
    webhook_id: z.string().openapi({ description: 'The `webhook-id` header of the ping (new for every ping)' }),
    target_url: z.string().openapi({ description: 'The URL that was tested' }),
  })
  .openapi('WebhookTestResult');

/** `POST /v1/me/webhook/test`: which organization's secret signs the ping (needed for a user of several). */
export const meWebhookTestBody = z
  .object({
    organization_id: uuidField().optional().openapi({
      description:
        'The organization whose signing secret signs the ping; may be left out when you belong to exactly one',
    }),
  })
  .openapi('MeWebhookTest');

export type WebhookTestResult = z.output<typeof WebhookTestResultSchema>;
