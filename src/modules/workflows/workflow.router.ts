import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../http/validate.js';
import type { WorkflowService } from './workflow.service.js';

/** Mounted at /v1/agents. */
export function workflowRouter(workflows: WorkflowService): Router {
  const router = Router();

  router.get('/:agentId/workflow', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await workflows.get(authOf(req), agentId));
  });

  router.put('/:agentId/workflow', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await workflows.replace(authOf(req), agentId, req.body));
  });

  return router;
}
