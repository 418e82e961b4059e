import type { RequestHandler } from 'express';

/**
 * `X-Content-Type-Options: nosniff` on every response. `Cache-Control: no-store` on every API
 * response: several carry a raw key, a dashboard token or a webhook secret, and the rest are
 * per-caller data that no shared cache should keep, so one rule covers them all.
 */
export const securityHeaders: RequestHandler = (req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (req.path === '/v1' || req.path.startsWith('/v1/')) res.setHeader('Cache-Control', 'no-store');
  next();
};
