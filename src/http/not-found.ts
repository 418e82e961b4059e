import type { RequestHandler } from 'express';
import type { OpenApiDocument } from '../openapi/document.js';
import { MethodNotAllowedError, NotFoundError } from '../errors/index.js';
import { routeMatcher } from './route-match.js';

/** Unknown path: 404. Known path (as the OpenAPI document lists it), other method: 405 with Allow. */
export function notFoundHandler(document: OpenApiDocument): RequestHandler {
  const match = routeMatcher(document);
  return (req) => {
    const route = match(req.path);
    if (route && route.methods.length > 0) throw new MethodNotAllowedError(req.method, route.methods);
    throw new NotFoundError('Route');
  };
}
