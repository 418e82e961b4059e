import { Router } from 'express';
import { requireDashboardToken } from '../../http/dashboard-token.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../http/validate.js';
import type { WebhookSecretService } from './webhook-secret.service.js';

const orgParams = uuidParams('orgId');

/** Mounted under /v1/organization. */
export function webhookSecretRouter(secrets: WebhookSecretService): Router {
  const router = Router();

  router.get('/:orgId/webhook-secret', requireDashboardToken, async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await secrets.get(authOf(req), orgId));
  });

  router.post('/:orgId/webhook-secret/rotate', requireDashboardToken, async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await secrets.rotate(authOf(req), orgId));
  });

  return router;
}
