import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../api/validate.js';
import type { WorkflowService } from './workflow.service.js';

/** Mounted at /v1/agents/:agentId/workflow. */
export function workflowRouter(workflows: WorkflowService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    sendResource(req, res, await workflows.get(authOf(req), agentId));
  });

  router.put('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await workflows.replace(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  return router;
}
