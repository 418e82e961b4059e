import type { BuiltModule, SharedDeps } from '../module.js';
import type { TestCases } from '../simulation/simulation.module.js';
import { registerRuntimePaths } from './route.openapi.js';
import { RouteReads } from './route-reads.js';
import { RouteRepository } from './route.repository.js';
import { runtimeRouter } from './route.router.js';
import { RouteService, type VariantAssigner } from './route.service.js';

/** The runtime's one routing answer: the call decision of the simulator, the configuration and the variant. */
export function buildRuntimeModule(
  deps: SharedDeps & { testCases: TestCases; experiments: { service: VariantAssigner } },
): BuiltModule {
  const routes = new RouteService(
    new RouteReads(new RouteRepository(deps.db), deps.cache),
    deps.agentAccess,
    deps.testCases.simulator,
    deps.clock,
    deps.experiments.service,
  );
  return {
    module: { mounts: [{ path: '/runtime', router: runtimeRouter(routes) }], openapi: registerRuntimePaths },
  };
}
