import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../errors/index.js';
import { authOf } from './request.js';

/**
 * For a route under the shared /v1 authentication that takes only the dashboard token (a user's own
 * profile, the webhook secret). Runs before the path parameters, like authentication itself.
 */
export const requireDashboardToken: RequestHandler = (req, _res, next) => {
  if (authOf(req).kind !== 'token') throw new UnauthorizedError('This endpoint requires a dashboard login token');
  next();
};
