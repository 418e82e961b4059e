import express, { Router, type Express } from 'express';
import { buildContainer, type AppDeps, type Container } from './container.js';
import { docsRouter } from './docs/docs-page.js';
import { createAuthentication } from './http/authenticate.js';
import { requireDashboardToken } from './http/dashboard-token.js';
import { jsonBody, multipartOperations } from './http/body.js';
import { errorHandler } from './http/error-handler.js';
import { inputGuard, pathGuard } from './http/input-guard.js';
import { notFoundHandler } from './http/not-found.js';
import { idempotency } from './modules/idempotency/idempotency.middleware.js';
import { mcpRouter } from './modules/mcp/mcp.router.js';
import { apiKeyRateLimit } from './http/rate-limit.js';
import { auditContext } from './http/audit-context.js';
import { metricsEndpoint, requestMetrics } from './metrics/http-metrics.js';
import { requestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { matchRoute, routeMatcher } from './http/route-match.js';
import { securityHeaders } from './http/security-headers.js';
import { series } from './http/series.js';
import { queryRules, strictQuery } from './http/strict-query.js';
import './http/types.js';
import { buildOpenApiDocument } from './openapi/document.js';

/** Middleware order, routers, 404/405 and the error renderer. Never listens. */
export function createApp(deps: AppDeps): { app: Express; container: Container } {
  const { config, logger, clock } = deps;
  const container = buildContainer(deps);
  const mounts = container.modules.flatMap((m) => m.mounts);
  const withoutIdempotencyKey = mounts.filter((m) => m.idempotencyKey === false).map((m) => `/v1${m.path}`);
  const document = buildOpenApiDocument(
    container.modules.map((m) => m.openapi),
    { version: config.APP_VERSION, publicBaseUrl: config.PUBLIC_BASE_URL, withoutIdempotencyKey },
  );
  const authentication = createAuthentication({
    credentials: container.credentials,
    agents: container.agentAccess,
    lastUsed: container.lastUsed,
    verifyToken: deps.verifyToken,
    clock,
    logger,
  });

  const app = express();
  app.disable('x-powered-by');
  // JSON API responses behind credentials and rate limits: no conditional-GET hashing per response.
  app.set('etag', false);
  app.set('trust proxy', config.TRUST_PROXY);

  // Every request passes these: one layer for the router to match, not five (src/http/series.ts).
  app.use(
    series([
      requestId,
      matchRoute(routeMatcher(document)),
      requestMetrics(container.metrics, ['/docs', '/metrics', '/mcp']),
      securityHeaders,
      requestLog(logger),
      pathGuard,
    ]),
  );

  // Every operation refuses a query parameter its document entry does not declare.
  const resources = new Map(mounts.flatMap((m) => Object.entries(m.resources ?? {})));
  const strict = strictQuery(queryRules(document), container.agentAccess, resources);
  for (const { path, access, router } of mounts) if (access === 'public') app.use(`/v1${path}`, strict, router);
  // Kept as the bytes it is served as: the document's objects (about 2 MB of heap, `npm run bench --
  // memory`) are needed only to derive the rules above and, on the first MCP request, its tools.
  const documentJson = Buffer.from(JSON.stringify(document));
  app.get('/v1/openapi.json', strict, (_req, res) => {
    res.set('Content-Type', 'application/json; charset=utf-8').send(documentJson);
  });
  // One router under /v1: the prefix is matched and stripped once per request, not once per layer.
  // One limiter for /v1 and /mcp (the counters live in the store, shared by both).
  const rateLimit = apiKeyRateLimit(deps.rateLimitStore, clock, (window) => container.metrics.rateLimitRefused(window));
  const v1 = Router();
  v1.use(
    series([
      authentication.any,
      ...rateLimit,
      jsonBody(config.BODY_LIMIT, multipartOperations(document)),
      inputGuard,
      idempotency(container.idempotency, logger, withoutIdempotencyKey),
      auditContext(container.auditRecorder),
      strict,
    ]),
  );
  for (const { path, access = 'any', router } of mounts) {
    if (access === 'any') v1.use(path, router);
    else if (access !== 'public') v1.use(path, requireDashboardToken(access.tokenOnly), router);
  }
  app.use('/v1', v1);
  // After /v1, which most requests are for: they are not matched against these first.
  app.use('/docs', docsRouter());
  // MCP for assistants: every tool call is a request to /v1 above, with the caller's own credentials.
  app.use(
    '/mcp',
    mcpRouter({
      document: () => JSON.parse(documentJson.toString()) as object,
      authenticate: authentication.any,
      rateLimit,
      jsonBody: jsonBody(config.BODY_LIMIT),
      tools: config.MCP_TOOLS,
      version: config.APP_VERSION,
    }),
  );
  app.get(
    '/metrics',
    metricsEndpoint(container.metrics, config.METRICS_TOKEN, { production: config.NODE_ENV === 'production' }),
  );

  app.use(notFoundHandler());
  app.use(errorHandler(logger));
  return { app, container };
}
