import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
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

  // Before '/:callId', which would take "stats" for an id.
  router.get('/stats', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await stats.forAgent(authOf(req), agentId, req.query));
  });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await calls.list(authOf(req), agentId, req.query));
  });

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

  router.get('/:callId', async (req, res) => {
    const { agentId, callId } = parse(callParams, req.params);
    sendResource(req, res, await calls.get(authOf(req), agentId, callId));
  });

  router.patch('/:callId', async (req, res) => {
    const { agentId, callId } = parse(callParams, req.params);
    sendResource(req, res, await calls.update(authOf(req), agentId, callId, req.body, writeConditions(req)));
  });

  return router;
}

const orgParams = uuidParams('orgId');

/** Mounted at /v1/organization/:orgId/calls. */
export function organizationCallRouter(stats: CallStatsService): Router {
  const router = Router({ mergeParams: true });
  router.get('/stats', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await stats.forOrganization(authOf(req), orgId, req.query));
  });
  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function callResources(calls: CallService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/calls/{callId}': resourceCheck(callParams, (auth, p) => calls.get(auth, p.agentId, p.callId)),
  };
}
