import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { access, json } from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    commit: z.string(),
    timestamp: z.iso.datetime(),
    checks: z.object({ database: z.enum(['ok', 'unavailable']) }),
  })
  .openapi('Health');

/** The outline of the document itself (its parts follow the OpenAPI 3.1 specification). */
const OpenApiDocumentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export function registerHealthPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/v1/health',
    operationId: 'getHealth',
    ...access('public'),
    tags: ['Health'],
    summary: 'Service health with a database check; no authentication',
    responses: { 200: json(HealthSchema, 'Healthy'), 503: json(HealthSchema, 'The database does not answer') },
  });
  registry.registerPath({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    ...access('public'),
    tags: ['Health'],
    summary: 'This OpenAPI document; no authentication',
    responses: { 200: json(OpenApiDocumentSchema, 'OpenAPI 3.1 document') },
  });
}
