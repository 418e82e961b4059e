import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse, uuidParams } from '../../api/validate.js';
import type { ExperimentService } from './experiment.service.js';

const experimentParams = uuidParams('agentId', 'experimentId');

/** Mounted at /v1/agents/:agentId/experiments. */
export function experimentRouter(experiments: ExperimentService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await experiments.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.status(201).json(await experiments.create(authOf(req), agentId, req.body));
  });

  router.get('/:experimentId', async (req, res) => {
    const { agentId, experimentId } = parse(experimentParams, req.params);
    res.json(await experiments.get(authOf(req), agentId, experimentId));
  });

  router.get('/:experimentId/results', async (req, res) => {
    const { agentId, experimentId } = parse(experimentParams, req.params);
    res.json(await experiments.results(authOf(req), agentId, experimentId));
  });

  router.post('/:experimentId/start', async (req, res) => {
    const { agentId, experimentId } = parse(experimentParams, req.params);
    res.json(await experiments.start(authOf(req), agentId, experimentId));
  });

  router.post('/:experimentId/stop', async (req, res) => {
    const { agentId, experimentId } = parse(experimentParams, req.params);
    res.json(await experiments.stop(authOf(req), agentId, experimentId));
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function experimentResources(experiments: ExperimentService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/experiments/{experimentId}': resourceCheck(experimentParams, (auth, p) =>
      experiments.get(auth, p.agentId, p.experimentId),
    ),
  };
}
