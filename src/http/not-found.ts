import type { RequestHandler } from 'express';
import { MethodNotAllowedError, NotFoundError } from '../errors/index.js';

/** Unknown path: 404. Known path (as the OpenAPI document lists it), other method: 405 with Allow. */
export function notFoundHandler(): RequestHandler {
  return (req) => {
    const route = req.routeTemplate;
    if (route && route.methods.length > 0) throw new MethodNotAllowedError(req.method, route.methods);
    throw new NotFoundError('Route');
  };
}
