import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { agentIdParams } from '../../api/validate.js';
import type { WebhookTestService } from './webhook-test.service.js';

/** Mounted at /v1/agents/:agentId/webhook. */
export function agentWebhookTestRouter(tests: WebhookTestService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.post('/test', agentIdParams).json((auth, { agentId }) => tests.testAgent(auth, agentId));
  return router;
}

/** Mounted at /v1/me/webhook (dashboard token only: webhook.module.ts). */
export function meWebhookTestRouter(tests: WebhookTestService): Router {
  const router = Router();
  const route = routesOf(router);
  route.post('/test').json((auth, _, req) => tests.testMe(auth, req.body));
  return router;
}
