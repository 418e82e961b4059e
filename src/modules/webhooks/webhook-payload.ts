import { EXPERIMENT_EVENT_TYPES, PHONE_NUMBER_EVENT_TYPES } from '../../events/event-recorder.js';
import { z } from '../../openapi/zod.js';
import { callOriginFields } from '../calls/call.schemas.js';
import { ExperimentSchema } from '../experiments/experiment.schemas.js';
import { PhoneNumberSchema } from '../phone-numbers/phone-number.schemas.js';

/** The bodies receivers get, as the spec's Events section lists them (schemas for the OpenAPI `webhooks`). */

export const WebhookCallSchema = z
  .object({
    id: z.string().openapi({ description: 'Call id; use it to deduplicate' }),
    call_id: z.string().nullable().openapi({ description: 'Identifier of the call in the telephony layer' }),
    customer_name: z.string().nullable(),
    customer_request: z.string().nullable(),
    phone_number: z.string().nullable().openapi({ description: 'Caller number' }),
    duration: z.number().nullable().openapi({ description: 'Seconds' }),
    done: z.boolean(),
    general_success: z.boolean().nullable(),
    disconnection_reason: z.string().nullable(),
    call_summary: z.string().nullable(),
    transcript: z.string().nullable().openapi({
      description: 'A JSON array of `{role, text}` objects, serialized into a string',
      example: '[{"role":"agent","text":"Hello"},{"role":"user","text":"Hi"}]',
    }),
    employee: z.object({ id: z.string(), name: z.string() }).nullable(),
    agent_id: z.string(),
    created_at: z.iso.datetime(),
    extracted_data: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .openapi({ description: "Typed outcomes, keyed by the agent's analysis field names" }),
    ...callOriginFields,
  })
  .openapi('WebhookCall');

export const CallCompletedPayloadSchema = z
  .object({ event: z.literal('call.completed'), call: WebhookCallSchema })
  .openapi('CallCompletedWebhook');

export const EmployeeForwardingCreatedPayloadSchema = z
  .object({
    event: z.literal('employee.forwarding_created'),
    employee: z.object({ name: z.string(), phone_number: z.string().nullable(), email: z.string().nullable() }),
    agents: z.array(z.string()).openapi({ description: 'Agent names' }),
    substitute: z.string().nullable().openapi({ description: 'Name of the substitute' }),
    responsibilities: z.string().nullable(),
    start_date: z.iso.date().nullable(),
    reasons: z.array(z.string()),
  })
  .openapi('EmployeeForwardingCreatedWebhook');

export const AgentUpdatedPayloadSchema = z
  .object({
    event: z.literal('agent.updated'),
    agent_id: z.uuid(),
    version: z
      .number()
      .int()
      .openapi({ description: 'The new configuration version (GET /v1/agents/{agentId}/versions/{version})' }),
    change: z.string().openapi({
      description:
        'agent.created, agent.updated, workflow.replaced, tool.created, tool.updated, tool.deleted or version.restored',
    }),
    changed_at: z.iso.datetime(),
  })
  .openapi('AgentUpdatedWebhook');

export const WebhookKbDocumentSchema = z
  .object({
    id: z.uuid(),
    title: z.string(),
    scope: z.enum(['agent', 'organization']),
    agent_id: z.uuid().nullable().openapi({ description: 'null for an organization document' }),
    status: z.enum(['ready', 'error', 'failed']).openapi({
      description: 'ready; error = no text to index; failed = processing broke (a content edit retries)',
    }),
    chunk_count: z.number().int(),
    error_message: z.string().nullable(),
    updated_at: z.iso.datetime(),
  })
  .openapi('WebhookKbDocument');

export const WebhookKbSyncSchema = z
  .object({
    status: z.enum(['synced', 'partial', 'failed']).openapi({
      description:
        "The document's sync_status after this sync: partial = some pages failed, failed = the start page did",
    }),
    pages_added: z.number().int(),
    pages_changed: z.number().int().openapi({ description: 'Pages whose text changed (re-chunked)' }),
    pages_removed: z.number().int().openapi({ description: 'Pages no longer reached or now failing (chunks dropped)' }),
    pages_unchanged: z.number().int().openapi({ description: 'Pages left as they were (their chunks untouched)' }),
    error: z.string().nullable().openapi({
      description:
        'Why the sync failed (the start page could not be fetched, or no page has text); null otherwise. After a failed refresh the chunks of the last good sync stay searchable (`document.status` stays ready)',
    }),
    errors: z.array(z.object({ url: z.string(), error: z.string() })).openapi({ description: 'Per-page errors' }),
  })
  .openapi('WebhookKbSync', {
    description:
      'What a web-source sync did; only on events of web sources (`source_type: url`), sent when a sync added, changed or removed pages, changed the status, or failed',
  });

export const KbDocumentReadyPayloadSchema = z
  .object({
    event: z.literal('kb.document.ready'),
    document: WebhookKbDocumentSchema,
    sync: WebhookKbSyncSchema.optional(),
  })
  .openapi('KbDocumentReadyWebhook');

export const KbDocumentFailedPayloadSchema = z
  .object({
    event: z.literal('kb.document.failed'),
    document: WebhookKbDocumentSchema,
    sync: WebhookKbSyncSchema.optional(),
  })
  .openapi('KbDocumentFailedWebhook');

export const DataSubjectErasedPayloadSchema = z
  .object({
    event: z.literal('data_subject.erased'),
    erasure_id: z.uuid(),
    organization_id: z.uuid(),
    erased: z.object({
      contacts: z.number().int(),
      calls: z.number().int(),
      webhook_deliveries: z.number().int(),
      idempotency_records: z.number().int(),
      test_cases: z.number().int(),
      outbound_calls: z.number().int(),
    }),
    erased_at: z.iso.datetime(),
  })
  .openapi('DataSubjectErasedWebhook', {
    description: 'Counts only: no identifier and no personal data of the erased person',
  });

export const WebhookTestPayloadSchema = z
  .object({
    event: z.literal('webhook.test'),
    test: z.literal(true),
    note: z.string().openapi({ description: 'Says that this is a test ping and nothing happened' }),
    organization_id: z.uuid(),
    agent_id: z.uuid().nullable().openapi({ description: 'The agent whose URL was tested; null for a /v1/me URL' }),
    sent_at: z.iso.datetime(),
  })
  .openapi('WebhookTestWebhook', {
    description: 'A test ping (POST /v1/agents/{agentId}/webhook/test or POST /v1/me/webhook/test); never stored',
  });

/** `phone_number.created` -> `PhoneNumberCreatedWebhook`: the name of a configuration event's schema. */
const schemaName = (type: string) =>
  `${type.replace(/(^|[._])(\w)/g, (_, _sep: string, c: string) => c.toUpperCase())}Webhook`;

/** A configuration change's body: the event, the resource after the change, and when. */
const changed = <T extends string, B extends z.ZodRawShape>(type: T, body: B) =>
  z.object({ event: z.literal(type), ...body, changed_at: z.iso.datetime() }).openapi(schemaName(type));

/** phone_number.created, .updated, .deleted: the number as it is after the change (as it was, for deleted). */
export const PHONE_NUMBER_PAYLOAD_SCHEMAS = PHONE_NUMBER_EVENT_TYPES.map((type) =>
  changed(type, { phone_number: PhoneNumberSchema }),
);

/** experiment.created, .started, .stopped, .ended: the experiment after the change. */
export const EXPERIMENT_PAYLOAD_SCHEMAS = EXPERIMENT_EVENT_TYPES.map((type) =>
  changed(type, { experiment: ExperimentSchema }),
);

const FIELD_ORDER: Record<string, string[]> = {
  'call.completed': Object.keys(CallCompletedPayloadSchema.shape),
  'employee.forwarding_created': Object.keys(EmployeeForwardingCreatedPayloadSchema.shape),
  'agent.updated': Object.keys(AgentUpdatedPayloadSchema.shape),
  'kb.document.ready': Object.keys(KbDocumentReadyPayloadSchema.shape),
  'kb.document.failed': Object.keys(KbDocumentFailedPayloadSchema.shape),
  'data_subject.erased': Object.keys(DataSubjectErasedPayloadSchema.shape),
  'webhook.test': Object.keys(WebhookTestPayloadSchema.shape),
  ...Object.fromEntries(
    [...PHONE_NUMBER_PAYLOAD_SCHEMAS, ...EXPERIMENT_PAYLOAD_SCHEMAS].map((schema) => [
      schema.shape.event.value,
      Object.keys(schema.shape),
    ]),
  ),
};
const NESTED_ORDER: Record<string, string[]> = {
  call: Object.keys(WebhookCallSchema.shape),
  document: Object.keys(WebhookKbDocumentSchema.shape),
  phone_number: Object.keys(PhoneNumberSchema.shape),
  experiment: Object.keys(ExperimentSchema.shape),
  sync: Object.keys(WebhookKbSyncSchema.shape),
};

function ordered(value: Record<string, unknown>, order: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of order) if (key in value) out[key] = value[key];
  for (const [key, v] of Object.entries(value)) if (!(key in out)) out[key] = v;
  return out;
}

/**
 * The exact bytes sent (and signed). PostgreSQL's jsonb reorders keys; this puts `event` first and
 * the fields in the spec's order. Nothing is added or dropped except `event`, filled in when absent.
 */
export function serializePayload(type: string, payload: Record<string, unknown>): string {
  const top = ordered({ event: type, ...payload }, FIELD_ORDER[type] ?? ['event']);
  for (const [key, order] of Object.entries(NESTED_ORDER)) {
    const nested = top[key];
    if (nested && typeof nested === 'object' && !Array.isArray(nested))
      top[key] = ordered(nested as Record<string, unknown>, order);
  }
  return JSON.stringify(top);
}
