import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../http/validate.js';
import type { WebhookDeliveryService } from './webhook-delivery.service.js';

const agentParams = uuidParams('agentId');
const deliveryParams = uuidParams('agentId', 'deliveryId');

/** Mounted under /v1/agents. */
export function webhookDeliveryRouter(deliveries: WebhookDeliveryService): Router {
  const router = Router();

  router.get('/:agentId/webhook-deliveries', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await deliveries.list(authOf(req), agentId, req.query));
  });

  router.post('/:agentId/webhook-deliveries/:deliveryId/redeliver', async (req, res) => {
    const { agentId, deliveryId } = parse(deliveryParams, req.params);
    res.status(202).json(await deliveries.redeliver(authOf(req), agentId, deliveryId));
  });

  return router;
}
