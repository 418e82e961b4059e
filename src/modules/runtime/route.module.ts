import type { Clock } from '../../clock.js';
import type { Db } from '../../db/knex.js';
import type { ApiModule } from '../../http/api-module.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { CallSimulator } from '../simulation/call-simulator.js';
import { registerRuntimePaths } from './route.openapi.js';
import { RouteRepository } from './route.repository.js';
import { runtimeRouter } from './route.router.js';
import { RouteService, type VariantAssigner } from './route.service.js';

export const runtimeModule: ApiModule<[RouteService]> = {
  mounts: (routes) => [{ path: '/runtime', router: runtimeRouter(routes) }],
  openapi: registerRuntimePaths,
};

/** The module's own wiring: the container passes what it shares. */
export function buildRuntime(deps: {
  db: Db;
  access: AgentAccess;
  simulator: CallSimulator;
  clock: Clock;
  variants?: VariantAssigner;
}): RouteService {
  return new RouteService(new RouteRepository(deps.db), deps.access, deps.simulator, deps.clock, deps.variants);
}
