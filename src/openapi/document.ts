import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';

export type OpenApiRegistration = (registry: OpenAPIRegistry) => void;

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** Builds the OpenAPI 3.1 document from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(
  registrations: OpenApiRegistration[],
  version: string,
  /** Path prefixes whose operations take no Idempotency-Key (`/v1/api-keys`). */
  options: { withoutIdempotencyKey?: readonly string[] } = {},
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
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
  for (const register of registrations) register(registry);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Voice Agent Management API',
      version,
      description: 'Configure AI voice agents, their staff, tools, knowledge and calls.',
    },
    servers: [{ url: '/' }],
  });
  return withIdempotencyKey(document, options.withoutIdempotencyKey ?? []);
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
    if (excluded.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) continue;
    for (const method of ['post', 'put', 'patch'] as const) {
      const operation = item?.[method];
      if (!operation) continue;
      operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
    }
  }
  return document;
}
