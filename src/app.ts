import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import { buildContainer, type AppDeps, type Container } from './container.js';
import { createAuthentication } from './http/authenticate.js';
import { requireDashboardToken } from './http/dashboard-token.js';
import { jsonBody } from './http/body.js';
import { errorHandler } from './http/error-handler.js';
import { notFoundHandler } from './http/not-found.js';
import { apiKeyRateLimit } from './http/rate-limit.js';
import { requestId } from './http/request-id.js';
import './http/types.js';
import { buildOpenApiDocument } from './openapi/document.js';

/** Middleware order, routers, 404/405 and the error renderer. Never listens. */
export function createApp(deps: AppDeps): { app: Express; container: Container } {
  const { config, logger, clock } = deps;
  const container = buildContainer(deps);
  const document = buildOpenApiDocument(
    container.modules.map((m) => m.openapi),
    config.APP_VERSION,
  );
  const mounts = container.modules.flatMap((m) => m.mounts);
  const authentication = createAuthentication({
    credentials: container.credentials,
    verifyToken: deps.verifyToken,
    clock,
    logger,
  });

  const app = express();
  app.disable('x-powered-by');
  // JSON API responses behind credentials and rate limits: no conditional-GET hashing per response.
  app.set('etag', false);
  app.set('trust proxy', config.TRUST_PROXY);

  app.use(requestId);
  app.use(
    pinoHttp({
      logger,
      genReqId: (req) => (req as express.Request).requestId,
      wrapSerializers: false,
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  for (const { path, access, router } of mounts) if (access === 'public') app.use(`/v1${path}`, router);
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(document);
  });

  app.use('/v1', authentication.any, ...apiKeyRateLimit(deps.rateLimitStore, clock), jsonBody(config.BODY_LIMIT));
  for (const { path, access = 'any', router } of mounts) {
    if (access === 'any') app.use(`/v1${path}`, router);
    else if (access !== 'public') app.use(`/v1${path}`, requireDashboardToken(access.tokenOnly), router);
  }

  app.use(notFoundHandler(document));
  app.use(errorHandler(logger));
  return { app, container };
}
