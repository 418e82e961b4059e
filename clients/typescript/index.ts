/**
 * A typed client for the Voice Agent Management API: openapi-fetch over the types that
 * openapi-typescript generates from the OpenAPI document (api.generated.ts), and `verifyWebhook()`
 * for receivers of the signed webhooks (Standard Webhooks, through the `standardwebhooks` package).
 */
import createClient, { type Client } from 'openapi-fetch';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components, paths } from './api.generated.js';

export type { components, operations, paths, webhooks } from './api.generated.js';
export { WebhookVerificationError };

export type Schemas = components['schemas'];
export type VoiceAgentClient = Client<paths>;

export type ClientOptions = {
  /** Where the API runs, e.g. https://api.example.com (paths start with /v1). */
  baseUrl: string;
  /** An API key (`svc_live_...`), sent as X-API-Key. */
  apiKey?: string;
  /** Or a dashboard login token, sent as `Authorization: Bearer`; required for /v1/api-keys. */
  token?: string;
  /** Another fetch (tests, proxies); defaults to the global one. */
  fetch?: typeof globalThis.fetch;
};

/** A client whose paths, parameters, bodies and responses are checked by the compiler. */
export function createVoiceAgentClient(options: ClientOptions): VoiceAgentClient {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['X-API-Key'] = options.apiKey;
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** What an openapi-fetch call resolves to: `data` or `error`, and the raw `response`. */
type Fetched<T> = { data?: T; error?: unknown; response: Response };

/**
 * A read-modify-write that never overwrites someone else's change: `read()` GETs the resource,
 * `write(current, etag)` sends the change computed from `current` with `If-Match: etag`. When the
 * resource changed in between (412 PRECONDITION_FAILED), both run once more against the fresh
 * state; a second 412 is returned to the caller. Returns the last call's result (the failed read,
 * or the write), errors included, as every call of this client does.
 */
export async function updateWithRetry<T, W extends { response: Response }>(
  read: () => Promise<Fetched<T>>,
  write: (current: T, etag: string) => Promise<W>,
  { attempts = 2 }: { attempts?: number } = {},
): Promise<W | Fetched<T>> {
  for (let attempt = 1; ; attempt++) {
    const current = await read();
    const etag = current.response.headers.get('ETag');
    if (current.data === undefined || !etag) return current;
    const written = await write(current.data, etag);
    if (written.response.status !== 412 || attempt >= attempts) return written;
  }
}

/** What a webhook request carries, by its `event` field. */
export type WebhookEvent =
  | Schemas['CallCompletedWebhook']
  | Schemas['EmployeeForwardingCreatedWebhook']
  | Schemas['AgentUpdatedWebhook']
  | Schemas['KbDocumentReadyWebhook']
  | Schemas['KbDocumentFailedWebhook']
  | Schemas['DataSubjectErasedWebhook']
  | Schemas['WebhookTestWebhook'];

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  return Array.isArray(value) ? value.join(' ') : (value ?? '');
}

/**
 * Verifies a webhook request and returns its payload; throws WebhookVerificationError when no
 * signature matches or the timestamp is more than 5 minutes off. Pass the raw body exactly as
 * received (before any JSON parsing) and the `whsec_...` secret from
 * GET /v1/organization/{orgId}/webhook-secret. During a rotation the server signs with both the new
 * and the previous secret, so either one verifies; pass several to accept any of them.
 */
export function verifyWebhook(secret: string | string[], headers: HeaderBag, rawBody: string | Buffer): WebhookEvent {
  const signed = {
    'webhook-id': header(headers, 'webhook-id'),
    'webhook-timestamp': header(headers, 'webhook-timestamp'),
    'webhook-signature': header(headers, 'webhook-signature'),
  };
  let lastError: unknown = new WebhookVerificationError('No secret given');
  for (const candidate of Array.isArray(secret) ? secret : [secret]) {
    try {
      return new Webhook(candidate).verify(rawBody, signed) as WebhookEvent;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}
