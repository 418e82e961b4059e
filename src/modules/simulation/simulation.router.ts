import { Router } from 'express';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../api/validate.js';
import { testCaseParams } from './simulation.schemas.js';
import type { SimulationService } from './simulation.service.js';
import type { TestCaseService } from './test-case.service.js';

/** Mounted at /agents/:agentId/simulate. */
export function simulationRouter(simulations: SimulationService): Router {
  const router = Router({ mergeParams: true });
  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await simulations.simulate(authOf(req), agentId, req.body));
  });
  return router;
}

/** Mounted at /agents/:agentId/test-cases. */
export function testCaseRouter(cases: TestCaseService): Router {
  const router = Router({ mergeParams: true });
  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await cases.list(authOf(req), agentId));
  });
  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    sendResource(req, res, await cases.create(authOf(req), agentId, req.body), { status: 201 });
  });
  router.post('/run', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await cases.run(authOf(req), agentId, req.body));
  });
  router.post('/suggest', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await cases.suggest(authOf(req), agentId));
  });
  router.delete('/:caseId', async (req, res) => {
    const { agentId, caseId } = parse(testCaseParams, req.params);
    await cases.delete(authOf(req), agentId, caseId, writeConditions(req));
    res.status(204).end();
  });
  return router;
}
