import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../errors/index.js';
import type { OpenApiDocument } from '../openapi/document.js';
import type { Metrics } from './metrics.js';

/**
 * The route pattern of a request path as the OpenAPI document writes it (`/v1/agents/{agentId}`), so
 * the label set stays bounded whatever ids are requested. Paths with more literal segments win
 * (`.../knowledge-base/search` before `.../knowledge-base/{documentId}`).
 */
export function routePatterns(document: OpenApiDocument, extra: string[]): (path: string) => string {
  const patterns = Object.keys(document.paths ?? {})
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      regex: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }))
    .sort((a, b) => a.params - b.params);
  return (path) => {
    const found = patterns.find((p) => p.regex.test(path));
    if (found) return found.template;
    return extra.find((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ?? 'unmatched';
  };
}

/** Times every request until its response is finished (or the client went away). */
export function requestMetrics(metrics: Metrics, routeOf: (path: string) => string): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // Read now: routers strip their mount path from req.url while they handle the request.
    const route = routeOf(req.path);
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

/** GET /metrics in the Prometheus text format; `Authorization: Bearer <METRICS_TOKEN>` when one is set. */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): RequestHandler {
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  return async (req, res) => {
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
