import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { uuidParams } from '../../api/validate.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';

const agentParams = uuidParams('agentId');
const deliveryParams = uuidParams('agentId', 'deliveryId');

/** Mounted at /v1/agents/:agentId/webhook-deliveries. */
export function webhookDeliveryRouter(deliveries: WebhookDeliveryService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.get('/', agentParams).json((auth, { agentId }, req) => deliveries.list(auth, agentId, req.query));

  route
    .post('/:deliveryId/redeliver', deliveryParams)
    .json((auth, { agentId, deliveryId }) => deliveries.redeliver(auth, agentId, deliveryId), 202);

  return router;
}
