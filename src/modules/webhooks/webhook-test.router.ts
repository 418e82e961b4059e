import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../api/validate.js';
import type { WebhookTestService } from './webhook-test.service.js';

/** Mounted at /v1/agents/:agentId/webhook. */
export function agentWebhookTestRouter(tests: WebhookTestService): Router {
  const router = Router({ mergeParams: true });
  router.post('/test', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await tests.testAgent(authOf(req), agentId));
  });
  return router;
}

/** Mounted at /v1/me/webhook (dashboard token only: webhook.module.ts). */
export function meWebhookTestRouter(tests: WebhookTestService): Router {
  const router = Router();
  router.post('/test', async (req, res) => {
    res.json(await tests.testMe(authOf(req), req.body));
  });
  return router;
}
