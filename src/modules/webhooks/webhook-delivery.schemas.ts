import { paginationShape } from '../../api/pagination.js';
import { EVENT_TYPES } from '../../events/event-recorder.js';
import { z } from '../../openapi/zod.js';
import type { AttemptRow, DeliveryWithAttempts } from './webhook-delivery.repository.js';
import { pick } from '../../db/pick.js';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const listDeliveriesQuery = z.object({
  ...paginationShape,
  status: z.enum(DELIVERY_STATUSES, { message: `Must be one of: ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

export const WebhookDeliveryAttemptSchema = z
  .object({
    attempt: z
      .number()
      .int()
      .openapi({ description: '1 for the first attempt, then one more per automatic retry or redelivery' }),
    trigger: z.enum(['event', 'retry', 'redelivery']).openapi({
      description:
        'event: the first attempt; retry: an automatic retry (when the target turned retries on); redelivery: asked for through the API',
    }),
    status: z.enum(['succeeded', 'failed']),
    http_status: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'null when no HTTP answer came (refused, timeout, network)' }),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    attempted_at: z.iso.datetime(),
  })
  .openapi('WebhookDeliveryAttempt');

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid().nullable(),
    event_id: z.uuid(),
    event_type: z.enum(EVENT_TYPES),
    webhook_id: z
      .string()
      .openapi({ description: 'The `webhook-id` header: stable for the event, the same on every attempt' }),
    target_kind: z.enum(['agent', 'member']).openapi({
      description:
        "agent: the agent's post_call_webhook_url; member: the webhook_url an organization member set on /v1/me",
    }),
    target_url: z.string(),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description:
        'Outcome of the latest attempt; pending until an attempt is recorded, and while an automatic retry is scheduled (then failed once the last one failed)',
    }),
    http_status: z.number().int().nullable().openapi({ description: 'Of the latest attempt' }),
    duration_ms: z.number().int().nullable().openapi({ description: 'Of the latest attempt' }),
    error: z.string().nullable().openapi({ description: 'Of the latest attempt' }),
    attempted_at: z.iso.datetime().nullable().openapi({ description: 'When the latest attempt started' }),
    attempt_count: z.number().int(),
    retries: z.boolean().openapi({
      description:
        "Whether failed attempts are retried automatically: the target's post_call_webhook_retries / webhook_retries when the event was dispatched",
    }),
    next_retry_at: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When the next automatic retry is due; null when none is scheduled' }),
    attempts: z.array(WebhookDeliveryAttemptSchema),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('WebhookDelivery');

function toAttempt(row: AttemptRow) {
  return {
    attempt: row.attempt_number,
    ...pick(row, ['trigger', 'status', 'http_status', 'duration_ms', 'error', 'attempted_at']),
  };
}

/** The API shape: the latest attempt's outcome on the delivery, and every attempt beside it. */
export function toDelivery(row: DeliveryWithAttempts) {
  const latest = row.attempts.at(-1);
  return {
    id: row.id,
    agent_id: row.agent_id,
    event_id: row.event_id,
    event_type: row.event_type,
    webhook_id: row.event_id,
    target_kind: row.target_kind,
    target_url: row.target_url,
    status: row.status,
    http_status: latest?.http_status ?? null,
    duration_ms: latest?.duration_ms ?? null,
    error: latest?.error ?? null,
    attempted_at: latest?.attempted_at ?? null,
    attempt_count: row.attempt_count,
    retries: row.retries,
    next_retry_at: row.next_retry_at,
    attempts: row.attempts.map(toAttempt),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type WebhookDelivery = ReturnType<typeof toDelivery>;
