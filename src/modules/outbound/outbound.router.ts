import express, { Router } from 'express';
import { agentCollectionResources, agentItemsRouter } from '../../http/agent-collection-router.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { BULK_BODY_LIMIT } from '../../http/body.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { CampaignService } from './campaign.service.js';
import type { OutboundService } from './outbound.service.js';

const jobParams = uuidParams('agentId', 'outboundCallId');
const orgParams = uuidParams('orgId');

/** Mounted at /v1/agents/:agentId/outbound-calls. */
export function outboundCallRouter(outbound: OutboundService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await outbound.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const { created, job } = await outbound.create(authOf(req), agentId, req.body);
    res.status(created ? 201 : 200).json(job);
  });

  // Before '/:outboundCallId', which would take "preview" for an id.
  router.post('/preview', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await outbound.preview(authOf(req), agentId, req.body));
  });

  router.get('/:outboundCallId', async (req, res) => {
    const { agentId, outboundCallId } = parse(jobParams, req.params);
    res.json(await outbound.get(authOf(req), agentId, outboundCallId));
  });

  router.post('/:outboundCallId/cancel', async (req, res) => {
    const { agentId, outboundCallId } = parse(jobParams, req.params);
    res.json(await outbound.cancel(authOf(req), agentId, outboundCallId));
  });

  return router;
}

/** Mounted at /v1/organization/:orgId/do-not-call. */
export function doNotCallRouter(outbound: OutboundService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await outbound.listDoNotCall(authOf(req), orgId, req.query));
  });

  router.post('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    const { created, entry } = await outbound.addDoNotCall(authOf(req), orgId, req.body);
    res.status(created ? 201 : 200).json(entry);
  });

  router.delete('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    await outbound.removeDoNotCall(authOf(req), orgId, req.query);
    res.status(204).end();
  });

  return router;
}

/** Mounted at /v1/outbound: the dialer's side. */
export function dispatchRouter(outbound: OutboundService): Router {
  const router = Router({ mergeParams: true });

  router.post('/claim', async (req, res) => {
    res.json(await outbound.claim(authOf(req), req.body));
  });

  router.post('/attempts/:attemptId/result', async (req, res) => {
    res.json(await outbound.result(authOf(req), String(req.params.attemptId), req.body));
  });

  return router;
}

const campaignParams = uuidParams('agentId', 'campaignId');
const csv = express.text({ type: 'text/csv', limit: BULK_BODY_LIMIT });

/** Mounted at /v1/agents/:agentId/campaigns. */
export function campaignRouter(campaigns: CampaignService): Router {
  const router = agentItemsRouter(campaigns, 'campaignId', ['pause', 'resume', 'cancel']);

  router.post('/:campaignId/recipients', csv, async (req, res) => {
    const { agentId, campaignId } = parse(campaignParams, req.params);
    res.json(await campaigns.append(authOf(req), agentId, campaignId, req.body));
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function outboundResources(
  outbound: OutboundService,
  campaigns: CampaignService,
): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/outbound-calls/{outboundCallId}': resourceCheck(jobParams, (auth, p) =>
      outbound.get(auth, p.agentId, p.outboundCallId),
    ),
    ...agentCollectionResources(campaigns, 'campaigns', 'campaignId'),
  };
}
