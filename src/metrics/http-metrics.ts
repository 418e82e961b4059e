import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { UnauthorizedError } from '../errors/index.js';
import type { Metrics } from './metrics.js';

const STARTED = Symbol('request-metrics.started');
const ROUTE = Symbol('request-metrics.route');
type TimedResponse = Response & { [STARTED]: number; [ROUTE]: string };

/**
 * Times every request until its response is finished (or the client went away), labelled by the
 * OpenAPI path template (`/v1/agents/{agentId}`, matched on arrival) or one of `extra`'s prefixes, so
 * the label set stays bounded whatever ids are requested.
 */
export function requestMetrics(metrics: Metrics, extra: string[]): RequestHandler {
  // One listener shared by all responses, on 'close' (emitted once, after 'finish' or when the
  // client went away), the start and route kept on the response: no closure per request.
  function closed(this: TimedResponse): void {
    const seconds = (performance.now() - this[STARTED]) / 1000;
    metrics.observeRequest(this.req.method, this[ROUTE], this.statusCode, seconds);
  }
  return (req, res, next) => {
    const timed = res as TimedResponse;
    timed[STARTED] = performance.now();
    const path = req.path;
    timed[ROUTE] =
      req.routeTemplate?.path ??
      extra.find((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ??
      'unmatched';
    res.on('close', closed);
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
