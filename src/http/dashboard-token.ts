import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../errors/index.js';
import { authOf } from './request.js';

/**
 * The one "dashboard token only" guard, put in front of a mount whose module declares
 * `access: { tokenOnly }` (api-module.ts). It runs after the shared /v1 authentication and before
 * the path parameters are read: an API key, however valid, gets a 401 naming `subject`.
 */
export function requireDashboardToken(subject: string): RequestHandler {
  return (req, _res, next) => {
    if (authOf(req).kind !== 'token') throw new UnauthorizedError(`${subject} requires a dashboard login token`);
    next();
  };
}
