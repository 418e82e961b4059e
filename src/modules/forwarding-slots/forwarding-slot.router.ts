import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { ForwardingSlotService } from './forwarding-slot.service.js';

const slotParams = uuidParams('agentId', 'slotId');

/** Mounted at /v1/agents/:agentId/forwarding-slots. */
export function forwardingSlotRouter(slots: ForwardingSlotService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.get('/', agentIdParams).resource((auth, { agentId }) => slots.list(auth, agentId));

  router.put('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await slots.replace(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, {
      dryRun: conditions.dryRun,
      failingTestCases,
      representation: { data: resource.data },
    });
  });

  route.post('/', agentIdParams).resource((auth, { agentId }, req) => slots.create(auth, agentId, req.body), 201);

  route.get('/:slotId', slotParams).resource((auth, { agentId, slotId }) => slots.get(auth, agentId, slotId));

  route
    .patch('/:slotId', slotParams)
    .resource((auth, { agentId, slotId }, req) => slots.update(auth, agentId, slotId, req.body, writeConditions(req)));

  route
    .delete('/:slotId', slotParams)
    .noContent((auth, { agentId, slotId }, req) => slots.delete(auth, agentId, slotId, writeConditions(req)));

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function forwardingSlotResources(slots: ForwardingSlotService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/forwarding-slots/{slotId}': resourceCheck(slotParams, (auth, p) =>
      slots.get(auth, p.agentId, p.slotId),
    ),
  };
}
