import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { uuidParams } from '../../api/validate.js';
import type { WebhookSecretService } from './webhook-secret.service.js';

const orgParams = uuidParams('orgId');

/** Mounted at /v1/organization/:orgId/webhook-secret; dashboard token only (webhook.module.ts). */
export function webhookSecretRouter(secrets: WebhookSecretService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.get('/', orgParams).json((auth, { orgId }) => secrets.get(auth, orgId));

  route.post('/rotate', orgParams).json((auth, { orgId }) => secrets.rotate(auth, orgId));

  return router;
}
