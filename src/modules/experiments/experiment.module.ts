import type { BuiltModule, SharedDeps } from '../module.js';
import type { TestCases } from '../simulation/simulation.module.js';
import type { SimulationService } from '../simulation/simulation.service.js';
import { registerExperimentPaths } from './experiment.openapi.js';
import { ExperimentRepository } from './experiment.repository.js';
import { experimentResources, experimentRouter } from './experiment.router.js';
import { ExperimentService } from './experiment.service.js';

/** Exports its service: the runtime's route answer assigns the variant through it. */
export function buildExperimentModule(
  deps: SharedDeps & { testCases: TestCases; simulation: { simulations: SimulationService } },
): BuiltModule<{ service: ExperimentService }> {
  const service = new ExperimentService(
    deps.audited,
    new ExperimentRepository(deps.db),
    deps.agentAccess,
    deps.simulation.simulations,
    deps.testCases.simulator,
    deps.testCases.repository,
    deps.clock,
  );
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
    workers: [],
    service,
  };
}
