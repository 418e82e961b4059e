import express, { Router } from 'express';
import { routesOf } from '../../http/routes.js';
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
  const route = routesOf(router);

  route.get('/', agentIdParams).json((auth, { agentId }, req) => outbound.list(auth, agentId, req.query));

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const { created, job } = await outbound.create(authOf(req), agentId, req.body);
    res.status(created ? 201 : 200).json(job);
  });

  // Before '/:outboundCallId', which would take "preview" for an id.
  route.post('/preview', agentIdParams).json((auth, { agentId }, req) => outbound.preview(auth, agentId, req.body));

  route
    .get('/:outboundCallId', jobParams)
    .json((auth, { agentId, outboundCallId }) => outbound.get(auth, agentId, outboundCallId));

  route
    .post('/:outboundCallId/cancel', jobParams)
    .json((auth, { agentId, outboundCallId }) => outbound.cancel(auth, agentId, outboundCallId));

  return router;
}

/** Mounted at /v1/organization/:orgId/do-not-call. */
export function doNotCallRouter(outbound: OutboundService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.get('/', orgParams).json((auth, { orgId }, req) => outbound.listDoNotCall(auth, orgId, req.query));

  router.post('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    const { created, entry } = await outbound.addDoNotCall(authOf(req), orgId, req.body);
    res.status(created ? 201 : 200).json(entry);
  });

  route.delete('/', orgParams).noContent((auth, { orgId }, req) => outbound.removeDoNotCall(auth, orgId, req.query));

  return router;
}

/** Mounted at /v1/outbound: the dialer's side. */
export function dispatchRouter(outbound: OutboundService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.post('/claim').json((auth, _, req) => outbound.claim(auth, req.body));

  route
    .post('/attempts/:attemptId/result')
    .json((auth, _, req) => outbound.result(auth, String(req.params.attemptId), req.body));

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
