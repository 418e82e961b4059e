import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { sendStreamed } from '../../http/streamed-body.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { CallService } from './call.service.js';
import type { CallStatsService } from './call-stats.service.js';
import type { CallExportService } from './call-export.service.js';

const agentParams = uuidParams('agentId');
const callParams = uuidParams('agentId', 'callId');

/** Mounted at /v1/agents/:agentId/calls. */
export function callRouter(calls: CallService, stats: CallStatsService, exporter: CallExportService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  // Before '/:callId', which would take "stats" for an id.
  route.get('/stats', agentParams).json((auth, { agentId }, req) => stats.forAgent(auth, agentId, req.query));

  route.get('/', agentParams).json((auth, { agentId }, req) => calls.list(auth, agentId, req.query));

  router.get('/export', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    const file = await exporter.open(authOf(req), agentId, req.query);
    await sendStreamed(res, file, {
      'Content-Type': file.contentType,
      'Content-Disposition': `attachment; filename="${file.filename}"`,
      'Cache-Control': 'no-store',
    });
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    const { created, call } = await calls.intake(authOf(req), agentId, req.body);
    res.status(created ? 201 : 200).json(call);
  });

  route.get('/:callId', callParams).resource((auth, { agentId, callId }) => calls.get(auth, agentId, callId));

  route
    .patch('/:callId', callParams)
    .resource((auth, { agentId, callId }, req) => calls.update(auth, agentId, callId, req.body, writeConditions(req)));

  return router;
}

const orgParams = uuidParams('orgId');

/** Mounted at /v1/organization/:orgId/calls. */
export function organizationCallRouter(stats: CallStatsService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.get('/stats', orgParams).json((auth, { orgId }, req) => stats.forOrganization(auth, orgId, req.query));
  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function callResources(calls: CallService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/calls/{callId}': resourceCheck(callParams, (auth, p) => calls.get(auth, p.agentId, p.callId)),
  };
}
