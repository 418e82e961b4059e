import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { underPathPrefix } from '../http/path-prefix.js';
import { addPreconditions } from './preconditions.js';

export type OpenApiRegistration = (registry: OpenAPIRegistry) => void;

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export type OpenApiOptions = {
  version: string;
  /** Where clients reach this API (PUBLIC_BASE_URL); the document says `/` (this host) without it. */
  publicBaseUrl?: string;
  /** Path prefixes whose operations take no Idempotency-Key (`/v1/api-keys`). */
  withoutIdempotencyKey?: readonly string[];
};

type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses?: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const WRITES = new Set(['post', 'put', 'patch']);

const ref = (kind: 'headers' | 'responses', name: string) => ({ $ref: `#/components/${kind}/${name}` });

function registerComponents(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: '`svc_live_` followed by 32 lowercase hex characters',
  });
  registry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Dashboard login token',
  });
  const header = (name: string, description: string, type: 'string' | 'integer') =>
    registry.registerComponent('headers', name, { description, schema: { type } });
  header(
    'X-Request-Id',
    'The incoming X-Request-Id when well-formed, otherwise a new UUID; also in error bodies',
    'string',
  );
  header('X-RateLimit-Limit', 'API keys only: requests allowed in the current minute window', 'integer');
  header('X-RateLimit-Remaining', 'API keys only: requests left in the current minute window', 'integer');
  header('X-RateLimit-Reset', 'API keys only: Unix time (seconds) when the minute window resets', 'integer');
  header(
    'Retry-After',
    'Seconds to wait before the next attempt (60 for the minute window, 3600 for the hour)',
    'integer',
  );
  header('Allow', 'The methods this path supports, comma-separated', 'string');

  const error = (description: string, headers: Record<string, unknown> = {}) => ({
    description,
    headers: { 'X-Request-Id': ref('headers', 'X-Request-Id'), ...headers },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  registry.registerComponent(
    'responses',
    'MethodNotAllowed',
    error('METHOD_NOT_ALLOWED: the path exists, but not with this method', { Allow: ref('headers', 'Allow') }),
  );
  registry.registerComponent(
    'responses',
    'PayloadTooLarge',
    error('VALIDATION_ERROR: request body larger than the limit'),
  );
  registry.registerComponent(
    'responses',
    'InternalError',
    error('INTERNAL_ERROR: an unexpected error; the details are in the server log under the request id'),
  );
  registry.registerComponent(
    'responses',
    'ServiceUnavailable',
    error('SERVICE_UNAVAILABLE: the database is unavailable; retry after Retry-After seconds', {
      'Retry-After': ref('headers', 'Retry-After'),
    }),
  );
  registry.registerComponent(
    'responses',
    'BadRequest',
    error(
      'VALIDATION_ERROR: the request cannot be read (a malformed path, query or header, a query parameter the ' +
        'operation does not declare or a declared one given twice, a body that is not a JSON object); `details` ' +
        'names the field',
    ),
  );
  registry.registerComponent(
    'responses',
    'UnsupportedMediaType',
    error('VALIDATION_ERROR: the body is compressed in an unsupported Content-Encoding or not in UTF-8'),
  );
  registry.registerComponent(
    'responses',
    'Conflict',
    error(
      'CONFLICT: the request met a concurrent change to the same data (retry it), or a request with the same ' +
        'Idempotency-Key is still running',
    ),
  );
  registry.registerComponent(
    'responses',
    'IdempotencyKeyReused',
    error('VALIDATION_ERROR: this Idempotency-Key was already used with a different request'),
  );
}

function operations(document: OpenApiDocument): [string, Operation, string][] {
  const all: [string, Operation, string][] = [];
  for (const [group, isWebhook] of [
    [document.paths, false],
    [document.webhooks, true],
  ] as const) {
    for (const item of Object.values(group ?? {})) {
      for (const method of METHODS) {
        const op = (item as Record<string, Operation | undefined>)[method];
        if (op) all.push([isWebhook ? 'webhook' : 'path', op, method]);
      }
    }
  }
  return all;
}

/**
 * What every route shares, said once here instead of in each module: X-Request-Id on every response,
 * the rate-limit headers where API keys are limited, 405/413/500/503, and `security: []` on the
 * public routes and the webhooks (which we send, signed, rather than receive).
 */
function addCrossCuttingParts(document: OpenApiDocument): void {
  for (const [kind, op, method] of operations(document)) {
    op.security ??= [];
    if (kind === 'webhook') continue;
    const rateLimited = op.security.some((requirement) => 'ApiKeyAuth' in requirement);
    const responses = (op.responses ??= {});
    for (const [status, response] of Object.entries(responses)) {
      if (response.$ref) continue;
      const limitHeaders =
        rateLimited && (status.startsWith('2') || status === '429')
          ? {
              'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
              'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
              'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
            }
          : {};
      const retryAfter = status === '429' ? { 'Retry-After': ref('headers', 'Retry-After') } : {};
      response.headers = {
        'X-Request-Id': ref('headers', 'X-Request-Id'),
        ...limitHeaders,
        ...retryAfter,
        ...response.headers,
      };
    }
    responses['405'] ??= ref('responses', 'MethodNotAllowed');
    responses['500'] ??= ref('responses', 'InternalError');
    // Any operation refuses a query parameter it does not declare (src/http/strict-query.ts).
    responses['400'] ??= ref('responses', 'BadRequest');
    if (op.security.length > 0) {
      // Behind the credentials every request passes the same middleware (src/app.ts): the input
      // guard and the path decoding can refuse any of them, and any of them may meet a database outage.
      responses['503'] ??= ref('responses', 'ServiceUnavailable');
      if (WRITES.has(method)) {
        // The body parser reads every write, whether the operation takes a body or not.
        responses['413'] ??= ref('responses', 'PayloadTooLarge');
        responses['415'] ??= ref('responses', 'UnsupportedMediaType');
      }
      // A serialization failure or deadlock that outlived the transaction's retries.
      if (method !== 'get') responses['409'] ??= ref('responses', 'Conflict');
    } else if (op.requestBody) responses['413'] ??= ref('responses', 'PayloadTooLarge');
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** Builds the OpenAPI 3.1 document from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(
  registrations: OpenApiRegistration[],
  { version, publicBaseUrl, withoutIdempotencyKey = [] }: OpenApiOptions,
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerComponents(registry);
  for (const register of registrations) register(registry);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Voice Agent Management API',
      version,
      description:
        'Configure AI voice agents, their staff, tools, knowledge and calls. Every response carries ' +
        '`X-Request-Id`; errors share one envelope. Webhooks are signed following Standard Webhooks.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      publicBaseUrl
        ? { url: publicBaseUrl.replace(/\/+$/, ''), description: 'This deployment' }
        : { url: '/', description: 'The host serving this document' },
    ],
  });
  addPreconditions(document);
  addCrossCuttingParts(document);
  return withIdempotencyKey(document, withoutIdempotencyKey);
}

/**
 * Every POST, PUT and PATCH accepts `Idempotency-Key` (one middleware serves them all, so the
 * document adds the parameter to each such operation here rather than in every module).
 */
function withIdempotencyKey(document: OpenApiDocument, excluded: readonly string[]): OpenApiDocument {
  document.components ??= {};
  document.components.parameters = {
    ...document.components.parameters,
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe: the same key with the same request within 24 hours returns the first response ' +
        '(with `Idempotent-Replayed: true`) without doing anything again. The same key with a different ' +
        'request is 422; a retry while the first request is still running is 409. See docs/idempotency.md.',
      schema: { type: 'string', minLength: 1, maxLength: 255, example: '5b0c1f0e-8a3b-4c55-9f1e-2f8d1c7a9e41' },
    },
  };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (excluded.some((prefix) => underPathPrefix(prefix, path))) continue;
    for (const method of ['post', 'put', 'patch'] as const) {
      const operation = item?.[method];
      if (!operation) continue;
      operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      // The key's own answers: still running (409), or used before with another request (422).
      const responses = operation.responses as Record<string, unknown>;
      responses['409'] ??= { $ref: '#/components/responses/Conflict' };
      responses['422'] ??= { $ref: '#/components/responses/IdempotencyKeyReused' };
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return document;
}
