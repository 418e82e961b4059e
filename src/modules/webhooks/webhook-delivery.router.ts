import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';

const agentParams = uuidParams('agentId');
const deliveryParams = uuidParams('agentId', 'deliveryId');

/** Mounted at /v1/agents/:agentId/webhook-deliveries. */
export function webhookDeliveryRouter(deliveries: WebhookDeliveryService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await deliveries.list(authOf(req), agentId, req.query));
  });

  router.post('/:deliveryId/redeliver', async (req, res) => {
    const { agentId, deliveryId } = parse(deliveryParams, req.params);
    res.status(202).json(await deliveries.redeliver(authOf(req), agentId, deliveryId));
  });

  return router;
}
