import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { ForwardingSlotService } from './forwarding-slot.service.js';

const slotParams = uuidParams('agentId', 'slotId');

/** Mounted at /v1/agents/:agentId/forwarding-slots. */
export function forwardingSlotRouter(slots: ForwardingSlotService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    sendResource(req, res, await slots.list(authOf(req), agentId));
  });

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

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    sendResource(req, res, await slots.create(authOf(req), agentId, req.body), { status: 201 });
  });

  router.get('/:slotId', async (req, res) => {
    const { agentId, slotId } = parse(slotParams, req.params);
    sendResource(req, res, await slots.get(authOf(req), agentId, slotId));
  });

  router.patch('/:slotId', async (req, res) => {
    const { agentId, slotId } = parse(slotParams, req.params);
    sendResource(req, res, await slots.update(authOf(req), agentId, slotId, req.body, writeConditions(req)));
  });

  router.delete('/:slotId', async (req, res) => {
    const { agentId, slotId } = parse(slotParams, req.params);
    await slots.delete(authOf(req), agentId, slotId, writeConditions(req));
    res.status(204).end();
  });

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
