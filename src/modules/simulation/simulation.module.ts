import type { Db } from '../../db/knex.js';
import type { AgentService } from '../agents/agent.service.js';
import type { CallsTodayCounter } from '../agents/greeting-preview.service.js';
import type { AgentVersionRepository } from '../agent-versions/agent-version.repository.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { CallSimulator } from './call-simulator.js';
import { registerSimulationPaths } from './simulation.openapi.js';
import { SimulationRepository } from './simulation.repository.js';
import { simulationRouter, testCaseRouter } from './simulation.router.js';
import { SimulationService } from './simulation.service.js';
import { TestCaseGuard } from './test-case.guard.js';
import { TestCaseService } from './test-case.service.js';

/** The saved test cases and the simulator that runs them: the guard and the simulation routes share them. */
export type TestCases = { repository: SimulationRepository; simulator: CallSimulator; guard: TestCaseGuard };

/**
 * Built before the modules (src/container.ts puts `guard` into the shared infrastructure): every
 * write that changes what a call does checks the agent's saved test cases in its transaction.
 */
export function buildTestCases(deps: { db: Db; callsToday: CallsTodayCounter }): TestCases {
  const repository = new SimulationRepository(deps.db);
  const simulator = new CallSimulator(repository, deps.callsToday);
  return { repository, simulator, guard: new TestCaseGuard(repository, simulator) };
}

/** Simulating a change runs the agents module's PATCH rules, and can run against a saved version. */
export function buildSimulationModule(
  deps: SharedDeps & {
    testCases: TestCases;
    agents: { service: AgentService };
    agentVersions: { repository: AgentVersionRepository };
  },
): BuiltModule<{ simulations: SimulationService }> {
  const { repository, simulator } = deps.testCases;
  const agents = deps.agents.service;
  const simulations = new SimulationService(
    deps.agentAccess,
    agents,
    deps.agentVersions.repository,
    simulator,
    deps.clock,
  );
  const cases = new TestCaseService(
    deps.audited,
    repository,
    deps.agentAccess,
    agents,
    simulations,
    simulator,
    deps.clock,
  );
  return {
    module: {
      mounts: [
        { path: '/agents/:agentId/simulate', router: simulationRouter(simulations) },
        { path: '/agents/:agentId/test-cases', router: testCaseRouter(cases) },
      ],
      openapi: registerSimulationPaths,
    },
    simulations,
  };
}
