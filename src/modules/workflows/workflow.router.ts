import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { agentIdParams } from '../../api/validate.js';
import type { WorkflowService } from './workflow.service.js';

/** Mounted at /v1/agents/:agentId/workflow. */
export function workflowRouter(workflows: WorkflowService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  route.get('/', agentIdParams).resource((auth, { agentId }) => workflows.get(auth, agentId));

  route
    .put('/', agentIdParams)
    .checkedWrite((auth, { agentId }, req, conditions) => workflows.replace(auth, agentId, req.body, conditions));

  return router;
}
