import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';

export type OpenApiRegistration = (registry: OpenAPIRegistry) => void;

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/** Builds the OpenAPI 3.1 document from the same zod schemas the routes validate with. */
export function buildOpenApiDocument(registrations: OpenApiRegistration[], version: string): OpenApiDocument {
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
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Voice Agent Management API',
      version,
      description: 'Configure AI voice agents, their staff, tools, knowledge and calls.',
    },
    servers: [{ url: '/' }],
  });
}
