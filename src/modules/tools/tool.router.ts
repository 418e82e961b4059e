import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../http/validate.js';
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
    res.status(201).json(await tools.create(authOf(req), agentId, req.body));
  });

  router.get('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    res.json(await tools.get(authOf(req), agentId, toolId));
  });

  router.patch('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    res.json(await tools.update(authOf(req), agentId, toolId, req.body));
  });

  router.delete('/:toolId', async (req, res) => {
    const { agentId, toolId } = parse(toolParams, req.params);
    await tools.delete(authOf(req), agentId, toolId);
    res.status(204).end();
  });

  return router;
}
