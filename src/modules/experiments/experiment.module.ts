import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';
import type { ApiModule } from '../../http/api-module.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { CallSimulator } from '../simulation/call-simulator.js';
import { SimulationRepository } from '../simulation/simulation.repository.js';
import type { SimulationService } from '../simulation/simulation.service.js';
import { registerExperimentPaths } from './experiment.openapi.js';
import { ExperimentRepository } from './experiment.repository.js';
import { experimentRouter } from './experiment.router.js';
import { ExperimentService } from './experiment.service.js';

export const experimentModule: ApiModule<[ExperimentService]> = {
  mounts: (experiments) => [{ path: '/agents/:agentId/experiments', router: experimentRouter(experiments) }],
  openapi: registerExperimentPaths,
};

/** The module's own wiring: the container passes what it shares. */
export function buildExperiments(deps: {
  db: Db;
  access: AgentAccess;
  simulations: SimulationService;
  simulator: CallSimulator;
  clock: Clock;
}): ExperimentService {
  return new ExperimentService(
    deps.db,
    new ExperimentRepository(deps.db),
    deps.access,
    deps.simulations,
    deps.simulator,
    new SimulationRepository(deps.db),
    deps.clock,
  );
}
