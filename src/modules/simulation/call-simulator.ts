import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { AgentRow } from '../agents/agent.repository.js';
import { decideCall, type CallConfiguration } from '../agents/call-decision.js';
import { GreetingContactRepository, type CallerContact } from '../agents/greeting-contact.repository.js';
import { berlinDay, type CallsTodayCounter } from '../agents/greeting-preview.service.js';
import type { GreetingVariant } from '../agents/greeting.js';
import type { ToolSnapshot } from '../agent-versions/agent-configuration.js';
import { mismatchesOf, toSimulation } from './simulation-rules.js';
import type { Simulation, TestCaseResult } from './simulation.schemas.js';
import type { SimulationRepository, TestCaseRow } from './simulation.repository.js';

/** An agent's fields as a simulation sees them: the stored row with a version's or a PATCH's fields on top. */
export type SimulatedAgent = AgentRow & Record<string, unknown>;

export type Moment = { at: Date; callerNumber: string | null };

export type RunResult = { passed: number; failed: number; results: TestCaseResult[] };

/**
 * Simulates calls against one configuration: loads what the call can reach (one query), finds the
 * callers' contacts, and asks the one call decision (agents/call-decision.ts). Every read can run
 * inside a write's transaction, so the guard sees the state after the write.
 */
export class CallSimulator {
  constructor(
    private readonly db: Db,
    private readonly repository: SimulationRepository,
    private readonly countCallsToday: CallsTodayCounter,
  ) {}

  /** The full configuration of `agent`; `tools` replaces the stored tools (a version's snapshot). */
  async configuration(
    agent: SimulatedAgent,
    tools?: readonly ToolSnapshot[],
    trx?: Knex.Transaction,
  ): Promise<CallConfiguration> {
    const repository = trx ? this.repository.with(trx) : this.repository;
    const around = await repository.surroundings(agent, (agent.backup_agent_id as string | null) ?? null);
    return {
      agent: agent as CallConfiguration['agent'],
      backup: around.backup,
      employees: around.employees,
      slots: around.slots,
      tools: tools ?? around.tools,
    };
  }

  /** Every moment against `config`, contacts looked up once per distinct number (in parallel). */
  async simulate(
    agent: SimulatedAgent,
    config: CallConfiguration,
    moments: readonly Moment[],
    trx?: Knex.Transaction,
  ): Promise<Simulation[]> {
    const contacts = new GreetingContactRepository(trx ?? this.db);
    const numbers = [...new Set(moments.map((m) => m.callerNumber).filter((n): n is string => n !== null))];
    const found = await Promise.all(numbers.map((n) => contacts.findByPhone(agent.id, agent.organization_id, n)));
    const byNumber = new Map<string, CallerContact | undefined>(numbers.map((n, i) => [n, found[i]]));
    const countsCalls = (config.agent.greeting_variants ?? []).some(
      (v: GreetingVariant) => v.min_calls_today !== undefined,
    );
    return Promise.all(
      moments.map(async ({ at, callerNumber }) => {
        const contact = callerNumber ? (byNumber.get(callerNumber) ?? null) : null;
        // Only a variant with min_calls_today reads the count: otherwise no query is spent on it.
        const callsToday =
          countsCalls && callerNumber
            ? await this.countCallsToday({
                agentId: agent.id,
                organizationId: agent.organization_id,
                phoneNumber: callerNumber,
                ...berlinDay(at),
              })
            : 0;
        const decision = decideCall(config, at, { contact, callsToday, variables: {} });
        return toSimulation(agent.id, at, decision, contact);
      }),
    );
  }

  /** Runs the cases against `config`: each case is one simulated moment compared with its expectations. */
  async run(
    agent: SimulatedAgent,
    config: CallConfiguration,
    cases: readonly TestCaseRow[],
    trx?: Knex.Transaction,
  ): Promise<RunResult> {
    const moments = cases.map((c) => ({ at: new Date(c.input.at), callerNumber: c.input.caller_number ?? null }));
    const simulations = await this.simulate(agent, config, moments, trx);
    const results = cases.map((c, i) => {
      const mismatches = mismatchesOf(c.expect, simulations[i]!);
      return { id: c.id, name: c.name, passed: mismatches.length === 0, mismatches };
    });
    const passed = results.filter((r) => r.passed).length;
    return { passed, failed: results.length - passed, results };
  }
}
