import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { writeConditions } from '../../http/entity-tag.js';
import { agentIdParams } from '../../api/validate.js';
import { testCaseParams } from './simulation.schemas.js';
import type { SimulationService } from './simulation.service.js';
import type { TestCaseService } from './test-case.service.js';

/** Mounted at /agents/:agentId/simulate. */
export function simulationRouter(simulations: SimulationService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.post('/', agentIdParams).json((auth, { agentId }, req) => simulations.simulate(auth, agentId, req.body));
  return router;
}

/** Mounted at /agents/:agentId/test-cases. */
export function testCaseRouter(cases: TestCaseService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.get('/', agentIdParams).json((auth, { agentId }) => cases.list(auth, agentId));
  route.post('/', agentIdParams).resource((auth, { agentId }, req) => cases.create(auth, agentId, req.body), 201);
  route.post('/run', agentIdParams).json((auth, { agentId }, req) => cases.run(auth, agentId, req.body));
  route.post('/suggest', agentIdParams).json((auth, { agentId }) => cases.suggest(auth, agentId));
  route
    .delete('/:caseId', testCaseParams)
    .noContent((auth, { agentId, caseId }, req) => cases.delete(auth, agentId, caseId, writeConditions(req)));
  return router;
}
