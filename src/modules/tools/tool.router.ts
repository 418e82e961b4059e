import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { ToolService } from './tool.service.js';

const toolParams = uuidParams('agentId', 'toolId');

/** Mounted at /v1/agents/:agentId/tools. */
export function toolRouter(tools: ToolService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await tools.list(authOf(req), agentId));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await tools.create(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { status: 201, dryRun: conditions.dryRun, failingTestCases });
  });

  router.get('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    sendResource(req, res, await tools.get(authOf(req), agentId, toolId));
  });

  router.patch('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await tools.update(authOf(req), agentId, toolId, req.body, conditions);
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  router.delete('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    await tools.delete(authOf(req), agentId, toolId, writeConditions(req));
    res.status(204).end();
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function toolResources(tools: ToolService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/tools/{toolId}': resourceCheck(toolParams, (auth, p) => tools.get(auth, p.agentId, p.toolId)),
  };
}
