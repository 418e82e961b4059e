import type { RequestHandler } from 'express';
import type { OpenApiDocument } from '../openapi/document.js';
import { MethodNotAllowedError, NotFoundError } from '../errors/index.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Unknown path: 404. Known path (as the OpenAPI document lists it), other method: 405 with Allow. */
export function notFoundHandler(document: OpenApiDocument): RequestHandler {
  const routes = Object.entries(document.paths ?? {}).map(([path, item]) => ({
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    methods: METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => m.toUpperCase()),
  }));
  return (req) => {
    const route = routes.find((r) => r.pattern.test(req.path));
    if (route && route.methods.length > 0) throw new MethodNotAllowedError(req.method, route.methods);
    throw new NotFoundError('Route');
  };
}
