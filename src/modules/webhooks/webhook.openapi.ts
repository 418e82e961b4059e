import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  paginated,
  PaginationQuerySchema,
  tokenOnly,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { DELIVERY_STATUSES, WebhookDeliverySchema } from './webhook-delivery.schemas.js';
import {
  AgentUpdatedPayloadSchema,
  DataSubjectErasedPayloadSchema,
  CallCompletedPayloadSchema,
  EmployeeForwardingCreatedPayloadSchema,
  KbDocumentFailedPayloadSchema,
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
  const tags = ['Webhook deliveries'];
  registry.registerPath({
    method: 'get',
    path: '/v1/agents/{agentId}/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    ...access('agents:read', 'agent'),
    tags,
    summary: "Delivery log of the agent's webhooks (agents:read), newest first, each with its attempts",
    security: anyAuth,
    request: {
      params: z.object({ agentId: z.uuid() }),
      query: PaginationQuerySchema.extend({ status: z.enum(DELIVERY_STATUSES).optional() }),
    },
    responses: {
      200: json(paginated(WebhookDeliverySchema), 'A page of deliveries'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/agents/{agentId}/webhook-deliveries/{deliveryId}/redeliver',
    operationId: 'redeliverWebhookDelivery',
    ...access('agents:write', 'agent'),
    tags,
    summary:
      'Send the delivery again (agents:write): same target, same webhook-id, a new attempt recorded in the background',
    security: anyAuth,
    request: { params: z.object({ agentId: z.uuid(), deliveryId: z.uuid() }) },
    responses: {
      202: json(WebhookDeliverySchema, 'Queued; the delivery is pending until the attempt is recorded'),
      ...errorResponses(...AGENT_ROUTE_ERRORS),
    },
  });
}

function registerTestPaths(registry: OpenAPIRegistry): void {
  const tags = ['Webhook test pings'];
  const answer = json(
    WebhookTestResultSchema,
    "Sent (or refused by the guard): the receiver's outcome, within the webhook timeout. Not stored in the delivery log",
  );
  const conflict = 'CONFLICT: no webhook URL is set (`details[0].field` names the field to set); nothing was sent';
  registry.registerPath({
    method: 'post',
    path: '/v1/agents/{agentId}/webhook/test',
    operationId: 'testAgentWebhook',
    ...access('agents:write', 'agent'),
    tags,
    summary:
      "Send a signed webhook.test event to the agent's post_call_webhook_url now (agents:write) and answer with the outcome",
    security: anyAuth,
    request: { params: z.object({ agentId: z.uuid() }) },
    responses: {
      200: answer,
      ...errorResponses(...AGENT_ROUTE_ERRORS),
      409: { ...errorResponses(409)[409]!, description: conflict },
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/me/webhook/test',
    operationId: 'testMyWebhook',
    ...access('signed_in'),
    tags,
    summary:
      'Send a signed webhook.test event to your /v1/me webhook_url now (dashboard token only) and answer with the outcome',
    security: tokenOnly,
    request: { body: { ...jsonBody(meWebhookTestBody), required: false } },
    responses: {
      200: answer,
      ...errorResponses(400, 401, 404),
      409: { ...errorResponses(409)[409]!, description: conflict },
    },
  });
}

function registerSecretPaths(registry: OpenAPIRegistry): void {
  const tags = ['Webhook secret'];
  const params = z.object({ orgId: z.uuid() });
  registry.registerPath({
    method: 'get',
    path: '/v1/organization/{orgId}/webhook-secret',
    operationId: 'getWebhookSecret',
    ...access('developer_admin'),
    tags,
    summary: "The organization's webhook signing secret (dashboard token, developer_admin); created on first read",
    security: tokenOnly,
    request: { params },
    responses: { 200: json(WebhookSecretSchema, 'The secret'), ...errorResponses(400, 401, 403, 404) },
  });
  registry.registerPath({
    method: 'post',
    path: '/v1/organization/{orgId}/webhook-secret/rotate',
    operationId: 'rotateWebhookSecret',
    ...access('developer_admin'),
    tags,
    summary: 'Rotate the signing secret (dashboard token, developer_admin); the old secret also signs for 24 hours',
    security: tokenOnly,
    request: { params },
    responses: { 200: json(WebhookSecretSchema, 'The new secret'), ...errorResponses(400, 401, 403, 404) },
  });
}

/** What a receiver answers, for every event. */
const RECEIVER_RESPONSES = {
  200: {
    description:
      "Any 2xx counts as delivered; anything else (redirects included) is a failed attempt, retried only when the URL's owner turned retries on (post_call_webhook_retries, webhook_retries)",
  },
};

function registerWebhookPayloads(registry: OpenAPIRegistry): void {
  const responses = RECEIVER_RESPONSES;
  registry.registerWebhook({
    method: 'post',
    path: 'call.completed',
    operationId: 'callCompleted',
    tags: ['Webhooks'],
    summary: "After every completed call, to the agent's post_call_webhook_url",
    request: {
      headers: SignatureHeaders,
      body: { content: { 'application/json': { schema: CallCompletedPayloadSchema } } },
    },
    responses,
  });
  registry.registerWebhook({
    method: 'post',
    path: 'employee.forwarding_created',
    operationId: 'employeeForwardingCreated',
    tags: ['Webhooks'],
    summary:
      'When an employee status or forwarding changes, to the webhook_url of every organization member who set one (/v1/me)',
    request: {
      headers: SignatureHeaders,
      body: { content: { 'application/json': { schema: EmployeeForwardingCreatedPayloadSchema } } },
    },
    responses,
  });
  registry.registerWebhook({
    method: 'post',
    path: 'data_subject.erased',
    operationId: 'dataSubjectErased',
    tags: ['Webhooks'],
    summary:
      "After a person's data was erased (POST /v1/organization/{orgId}/data-subjects/erase), to each agent post_call_webhook_url of the organization whose `post_call_webhook_events` lists it and each member webhook_url (/v1/me) whose `webhook_events` lists it (one delivery per URL): erasure id and counts, no personal data",
    request: {
      headers: SignatureHeaders,
      body: { content: { 'application/json': { schema: DataSubjectErasedPayloadSchema } } },
    },
    responses,
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
  for (const [path, schema, summary] of events) {
    registry.registerWebhook({
      method: 'post',
      path,
      // agent.updated -> agentUpdated, kb.document.ready -> kbDocumentReady
      operationId: path.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()),
      tags: ['Webhooks'],
      summary,
      request: { headers: SignatureHeaders, body: { content: { 'application/json': { schema } } } },
      responses,
    });
  }
}

export function registerWebhookPaths(registry: OpenAPIRegistry): void {
  registerDeliveryPaths(registry);
  registerSecretPaths(registry);
  registerTestPaths(registry);
  registerWebhookPayloads(registry);
  registerConfigurationWebhooks(registry, RECEIVER_RESPONSES);
  registry.registerWebhook({
    method: 'post',
    path: 'webhook.test',
    operationId: 'webhookTest',
    tags: ['Webhooks'],
    summary:
      'A test ping, only when asked for (POST /v1/agents/{agentId}/webhook/test, POST /v1/me/webhook/test): signed like every event, with a webhook-id of its own; never stored or retried',
    request: {
      headers: SignatureHeaders,
      body: { content: { 'application/json': { schema: WebhookTestPayloadSchema } } },
    },
    responses: { 200: { description: 'Any 2xx counts as delivered' } },
  });
}
