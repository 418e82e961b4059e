import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../errors/index.js';
import type { Metrics } from './metrics.js';

/**
 * Times every request until its response is finished (or the client went away), labelled by the
 * OpenAPI path template (`/v1/agents/{agentId}`, matched on arrival) or one of `extra`'s prefixes, so
 * the label set stays bounded whatever ids are requested.
 */
export function requestMetrics(metrics: Metrics, extra: string[]): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const path = req.path;
    const route =
      req.routeTemplate?.path ??
      extra.find((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ??
      'unmatched';
    let done = false;
    const observe = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observeRequest(req.method, route, res.statusCode, seconds);
    };
    res.on('finish', observe);
    res.on('close', observe);
    next();
  };
}

/**
 * GET /metrics in the Prometheus text format; `Authorization: Bearer <METRICS_TOKEN>` when one is
 * set. In production a token is required: without METRICS_TOKEN every scrape is 401, so that the
 * endpoint is never open to whoever reaches the port.
 */
export function metricsEndpoint(
  metrics: Metrics,
  token: string | undefined,
  options: { production: boolean },
): RequestHandler {
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  return async (req, res) => {
    if (!expected && options.production) {
      throw new UnauthorizedError('Metrics need a token in production: set METRICS_TOKEN and scrape with it');
    }
    if (expected) {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new UnauthorizedError('A valid metrics token is required');
      }
    }
    res
      .set('Cache-Control', 'no-store')
      .type(metrics.registry.contentType)
      .send(await metrics.registry.metrics());
  };
}
