import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { WebhookSecretService } from './webhook-secret.service.js';

const orgParams = uuidParams('orgId');

/** Mounted at /v1/organization/:orgId/webhook-secret; dashboard token only (webhook.module.ts). */
export function webhookSecretRouter(secrets: WebhookSecretService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await secrets.get(authOf(req), orgId));
  });

  router.post('/rotate', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await secrets.rotate(authOf(req), orgId));
  });

  return router;
}
