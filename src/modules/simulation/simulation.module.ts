import type { ApiModule } from '../../http/api-module.js';
import { registerSimulationPaths } from './simulation.openapi.js';
import { simulationRouter, testCaseRouter } from './simulation.router.js';
import type { SimulationService } from './simulation.service.js';
import type { TestCaseService } from './test-case.service.js';

export const simulationModule: ApiModule<[SimulationService, TestCaseService]> = {
  mounts: (simulations, cases) => [
    { path: '/agents/:agentId/simulate', router: simulationRouter(simulations) },
    { path: '/agents/:agentId/test-cases', router: testCaseRouter(cases) },
  ],
  openapi: registerSimulationPaths,
};
