import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { errorResponses, json, jsonBody, paginated, PaginationQuerySchema, tokenOnly } from '../../openapi/common.js';
import { agentOperations, operationGroup } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { DELIVERY_STATUSES, WebhookDeliverySchema } from './webhook-delivery.schemas.js';
import {
  AgentUpdatedPayloadSchema,
  DataSubjectErasedPayloadSchema,
  CallCompletedPayloadSchema,
  EmployeeForwardingCreatedPayloadSchema,
  KbDocumentFailedPayloadSchema,
  EXPERIMENT_PAYLOAD_SCHEMAS,
  PHONE_NUMBER_PAYLOAD_SCHEMAS,
  KbDocumentReadyPayloadSchema,
  WebhookTestPayloadSchema,
} from './webhook-payload.js';
import { meWebhookTestBody, WebhookTestResultSchema } from './webhook-test.schemas.js';

export const WebhookSecretSchema = z
  .object({
    organization_id: z.uuid(),
    secret: z.string().openapi({
      description: '`whsec_` + base64 key; the HMAC key is the base64-decoded part',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
    previous_secret_expires_at: z.iso.datetime().nullable().openapi({
      description:
        'After a rotation: until when the previous secret still signs beside this one (24 h); null otherwise',
    }),
    rotated_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('WebhookSecret');

const SignatureHeaders = z.object({
  'webhook-id': z
    .string()
    .openapi({ description: 'Stable for the event (the same on every attempt): deduplicate on it' }),
  'webhook-timestamp': z.string().openapi({ description: 'Unix seconds when this attempt was signed' }),
  'webhook-signature': z.string().openapi({
    description:
      '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`; space-separated, one per active secret during a rotation',
  }),
});

function registerDeliveryPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Webhook deliveries');
  register({
    method: 'get',
    path: '/v1/agents/{agentId}/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    permission: 'agents:read',
    summary: "Delivery log of the agent's webhooks (agents:read), newest first, each with its attempts",
    request: {
      params: z.object({ agentId: z.uuid() }),
      query: PaginationQuerySchema.extend({ status: z.enum(DELIVERY_STATUSES).optional() }),
    },
    responses: {
      200: json(paginated(WebhookDeliverySchema), 'A page of deliveries'),
    },
  });
  register({
    method: 'post',
    path: '/v1/agents/{agentId}/webhook-deliveries/{deliveryId}/redeliver',
    operationId: 'redeliverWebhookDelivery',
    permission: 'agents:write',
    summary:
      'Send the delivery again (agents:write): same target, same webhook-id, a new attempt recorded in the background',
    request: { params: z.object({ agentId: z.uuid(), deliveryId: z.uuid() }) },
    responses: {
      202: json(WebhookDeliverySchema, 'Queued; the delivery is pending until the attempt is recorded'),
    },
  });
}

function registerTestPaths(registry: OpenAPIRegistry): void {
  const registerForAgent = agentOperations(registry, 'Webhook test pings');
  const registerForMe = operationGroup(registry, {
    tags: ['Webhook test pings'],
    security: tokenOnly,
    agentScope: 'none',
    errors: [400, 401, 404],
  });
  const answer = json(
    WebhookTestResultSchema,
    "Sent (or refused by the guard): the receiver's outcome, within the webhook timeout. Not stored in the delivery log",
  );
  const conflict = 'CONFLICT: no webhook URL is set (`details[0].field` names the field to set); nothing was sent';
  registerForAgent({
    method: 'post',
    path: '/v1/agents/{agentId}/webhook/test',
    operationId: 'testAgentWebhook',
    permission: 'agents:write',
    summary:
      "Send a signed webhook.test event to the agent's post_call_webhook_url now (agents:write) and answer with the outcome",
    responses: {
      200: answer,
      409: { ...errorResponses(409)[409]!, description: conflict },
    },
  });
  registerForMe({
    method: 'post',
    path: '/v1/me/webhook/test',
    operationId: 'testMyWebhook',
    permission: 'signed_in',
    summary:
      'Send a signed webhook.test event to your /v1/me webhook_url now (dashboard token only) and answer with the outcome',
    request: { body: { ...jsonBody(meWebhookTestBody), required: false } },
    responses: {
      200: answer,
      409: { ...errorResponses(409)[409]!, description: conflict },
    },
  });
}

function registerSecretPaths(registry: OpenAPIRegistry): void {
  const register = operationGroup(registry, {
    tags: ['Webhook secret'],
    security: tokenOnly,
    agentScope: 'none',
    errors: [400, 401, 403, 404],
  });
  const params = z.object({ orgId: z.uuid() });
  register({
    method: 'get',
    path: '/v1/organization/{orgId}/webhook-secret',
    operationId: 'getWebhookSecret',
    permission: 'developer_admin',
    summary: "The organization's webhook signing secret (dashboard token, developer_admin); created on first read",
    request: { params },
    responses: { 200: json(WebhookSecretSchema, 'The secret') },
  });
  register({
    method: 'post',
    path: '/v1/organization/{orgId}/webhook-secret/rotate',
    operationId: 'rotateWebhookSecret',
    permission: 'developer_admin',
    summary: 'Rotate the signing secret (dashboard token, developer_admin); the old secret also signs for 24 hours',
    request: { params },
    responses: { 200: json(WebhookSecretSchema, 'The new secret') },
  });
}

/** What a receiver answers, for every event. */
const RECEIVER_RESPONSES = {
  200: {
    description:
      "Any 2xx counts as delivered; anything else (redirects included) is a failed attempt, retried only when the URL's owner turned retries on (post_call_webhook_retries, webhook_retries)",
  },
};

/** One event a receiver gets: signed (the signature headers), its payload as the JSON body. */
function registerEvent(
  registry: OpenAPIRegistry,
  event: { path: string; operationId: string; summary: string; schema: z.ZodType },
  responses: Record<number, { description: string }> = RECEIVER_RESPONSES,
): void {
  registry.registerWebhook({
    method: 'post',
    path: event.path,
    operationId: event.operationId,
    tags: ['Webhooks'],
    summary: event.summary,
    request: { headers: SignatureHeaders, body: { content: { 'application/json': { schema: event.schema } } } },
    responses,
  });
}

function registerWebhookPayloads(registry: OpenAPIRegistry): void {
  registerEvent(registry, {
    path: 'call.completed',
    operationId: 'callCompleted',
    summary: "After every completed call, to the agent's post_call_webhook_url",
    schema: CallCompletedPayloadSchema,
  });
  registerEvent(registry, {
    path: 'employee.forwarding_created',
    operationId: 'employeeForwardingCreated',
    summary:
      'When an employee status or forwarding changes, to the webhook_url of every organization member who set one (/v1/me)',
    schema: EmployeeForwardingCreatedPayloadSchema,
  });
  registerEvent(registry, {
    path: 'data_subject.erased',
    operationId: 'dataSubjectErased',
    summary:
      "After a person's data was erased (POST /v1/organization/{orgId}/data-subjects/erase), to each agent post_call_webhook_url of the organization whose `post_call_webhook_events` lists it and each member webhook_url (/v1/me) whose `webhook_events` lists it (one delivery per URL): erasure id and counts, no personal data",
    schema: DataSubjectErasedPayloadSchema,
  });
}

/** The events added with configuration history; no URL receives them until its owner chooses them. */
function registerConfigurationWebhooks(
  registry: OpenAPIRegistry,
  responses: Record<number, { description: string }>,
): void {
  const receivers =
    "to the agent's post_call_webhook_url when `post_call_webhook_events` lists it, and to each member webhook_url (/v1/me) whose `webhook_events` lists it";
  const events = [
    [
      'agent.updated',
      AgentUpdatedPayloadSchema,
      `After every change of an agent's configuration (a new version), ${receivers}`,
    ],
    [
      'kb.document.ready',
      KbDocumentReadyPayloadSchema,
      `When a knowledge-base document is indexed, or a web source's sync added, changed or removed pages (with \`sync\`), ${receivers} (organization documents: members only)`,
    ],
    [
      'kb.document.failed',
      KbDocumentFailedPayloadSchema,
      `When a knowledge-base document cannot be indexed (status error or failed), or a web source's sync failed (with \`sync\`; the last good sync's chunks stay, so \`document.status\` may be ready), ${receivers} (organization documents: members only)`,
    ],
  ] as const;
  const everyUrl =
    'to every agent post_call_webhook_url of the organization whose `post_call_webhook_events` lists it and each member webhook_url (/v1/me) whose `webhook_events` lists it (one delivery per URL)';
  const changes: Record<string, string> = {
    'phone_number.created': `When a phone number is created, ${everyUrl}`,
    'phone_number.updated': `When a phone number changes (its agent, label, provider or credentials; a number released by assigning another), ${everyUrl}`,
    'phone_number.deleted': `When a phone number is deleted (the body holds it as it was), ${everyUrl}`,
    'experiment.created': `When an experiment of an agent is created, ${receivers}`,
    'experiment.started': `When an experiment starts, ${receivers}`,
    'experiment.stopped': `When an experiment is stopped by hand, ${receivers}`,
    'experiment.ended': `When an experiment ends itself (ends_at passed or max_calls reached), ${receivers}`,
  };
  const changeEvents = [...PHONE_NUMBER_PAYLOAD_SCHEMAS, ...EXPERIMENT_PAYLOAD_SCHEMAS].map(
    (schema) => [schema.shape.event.value, schema, changes[schema.shape.event.value]!] as const,
  );
  for (const [path, schema, summary] of [...events, ...changeEvents]) {
    registerEvent(
      registry,
      // agent.updated -> agentUpdated, kb.document.ready -> kbDocumentReady, phone_number.created -> phoneNumberCreated
      { path, operationId: path.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase()), summary, schema },
      responses,
    );
  }
}

export function registerWebhookPaths(registry: OpenAPIRegistry): void {
  registerDeliveryPaths(registry);
  registerSecretPaths(registry);
  registerTestPaths(registry);
  registerWebhookPayloads(registry);
  registerConfigurationWebhooks(registry, RECEIVER_RESPONSES);
  registerEvent(
    registry,
    {
      path: 'webhook.test',
      operationId: 'webhookTest',
      summary:
        'A test ping, only when asked for (POST /v1/agents/{agentId}/webhook/test, POST /v1/me/webhook/test): signed like every event, with a webhook-id of its own; never stored or retried',
      schema: WebhookTestPayloadSchema,
    },
    { 200: { description: 'Any 2xx counts as delivered' } },
  );
}
