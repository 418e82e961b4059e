import type { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { agentCollectionResources, agentItemsRouter } from '../../http/agent-collection-router.js';
import type { ResourceCheck } from '../../http/strict-query.js';
import { uuidParams } from '../../api/validate.js';
import type { ExperimentService } from './experiment.service.js';

const experimentParams = uuidParams('agentId', 'experimentId');

/** Mounted at /v1/agents/:agentId/experiments. */
export function experimentRouter(experiments: ExperimentService): Router {
  const router = agentItemsRouter(experiments, 'experimentId', ['start', 'stop']);
  const route = routesOf(router);

  route
    .get('/:experimentId/results', experimentParams)
    .json((auth, { agentId, experimentId }) => experiments.results(auth, agentId, experimentId));

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function experimentResources(experiments: ExperimentService): Record<string, ResourceCheck> {
  return agentCollectionResources(experiments, 'experiments', 'experimentId');
}
