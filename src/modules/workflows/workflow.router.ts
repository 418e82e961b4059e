import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../http/validate.js';
import type { WorkflowService } from './workflow.service.js';

/** Mounted at /v1/agents/:agentId/workflow. */
export function workflowRouter(workflows: WorkflowService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await workflows.get(authOf(req), agentId));
  });

  router.put('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await workflows.replace(authOf(req), agentId, req.body));
  });

  return router;
}
