import type { Router } from 'express';
import { agentCollectionResources, agentItemsRouter } from '../../http/agent-collection-router.js';
import type { ResourceCheck } from '../../http/strict-query.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { ExperimentService } from './experiment.service.js';

const experimentParams = uuidParams('agentId', 'experimentId');

/** Mounted at /v1/agents/:agentId/experiments. */
export function experimentRouter(experiments: ExperimentService): Router {
  const router = agentItemsRouter(experiments, 'experimentId', ['start', 'stop']);

  router.get('/:experimentId/results', async (req, res) => {
    const { agentId, experimentId } = parse(experimentParams, req.params);
    res.json(await experiments.results(authOf(req), agentId, experimentId));
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function experimentResources(experiments: ExperimentService): Record<string, ResourceCheck> {
  return agentCollectionResources(experiments, 'experiments', 'experimentId');
}
