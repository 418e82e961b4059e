import type { BuiltModule, SharedDeps } from '../module.js';
import type { TestCases } from '../simulation/simulation.module.js';
import type { SimulationService } from '../simulation/simulation.service.js';
import { registerExperimentPaths } from './experiment.openapi.js';
import { ExperimentRepository } from './experiment.repository.js';
import { experimentResources, experimentRouter } from './experiment.router.js';
import { ExperimentService } from './experiment.service.js';
import { ExperimentEnding, ExperimentEndWorker } from './experiment-end.worker.js';

/**
 * Exports its service (the runtime's route answer assigns the variant through it) and the ending
 * pass its scheduled worker runs (tests drive it).
 */
export function buildExperimentModule(
  deps: SharedDeps & { testCases: TestCases; simulation: { simulations: SimulationService } },
): BuiltModule<{ service: ExperimentService; ending: ExperimentEnding }> {
  const experiments = new ExperimentRepository(deps.db);
  const ending = new ExperimentEnding(deps.db, experiments, deps.events, deps.clock, deps.logger);
  const service = new ExperimentService({
    audited: deps.audited,
    experiments,
    access: deps.agentAccess,
    simulations: deps.simulation.simulations,
    simulator: deps.testCases.simulator,
    cases: deps.testCases.repository,
    clock: deps.clock,
    events: deps.events,
    ending,
  });
  return {
    module: {
      mounts: [
        {
          path: '/agents/:agentId/experiments',
          router: experimentRouter(service),
          resources: experimentResources(service),
        },
      ],
      openapi: registerExperimentPaths,
    },
    workers: [new ExperimentEndWorker(deps.queue, ending)],
    service,
    ending,
  };
}
