import type { Knex } from 'knex';
import type { AgentRow } from '../agents/agent.repository.js';
import { decideCall, type CallConfiguration } from '../agents/call-decision.js';
import { FULL_DISCLOSURE, type CallerDisclosure } from '../agents/caller-disclosure.js';
import type { CallerContact } from '../agents/greeting-contact.repository.js';
import { berlinDay, type CallsTodayCounter } from '../agents/greeting-preview.service.js';
import type { GreetingVariant } from '../agents/greeting.js';
import type { ToolSnapshot } from '../agent-versions/agent-configuration.js';
import { mismatchesOf, toSimulation } from './simulation-rules.js';
import type { Simulation, TestCaseResult } from './simulation.schemas.js';
import type { CallSurroundings, SimulationRepository, TestCaseRow } from './simulation.repository.js';

/** An agent's fields as a simulation sees them: the stored row with a version's or a PATCH's fields on top. */
export type SimulatedAgent = AgentRow & Record<string, unknown>;

export type Moment = { at: Date; callerNumber: string | null };

/** A configuration to simulate, and the contacts of the callers asked for. */
export type Surroundings = { config: CallConfiguration; contacts: ReadonlyMap<string, CallerContact> };

export type RunResult = { passed: number; failed: number; results: TestCaseResult[] };

/** The moments of saved cases. */
export function momentsOf(cases: readonly TestCaseRow[]): Moment[] {
  return cases.map((c) => ({ at: new Date(c.input.at), callerNumber: c.input.caller_number ?? null }));
}

/** The caller numbers of some moments. */
export function callerNumbersOf(moments: readonly Moment[]): string[] {
  return moments.map((m) => m.callerNumber).filter((n): n is string => n !== null);
}

/** Whether the greeting reads the caller's calls today (a variant with `min_calls_today`). */
export function countsCallsToday(config: CallConfiguration): boolean {
  return (config.agent.greeting_variants ?? []).some((v: GreetingVariant) => v.min_calls_today !== undefined);
}

/**
 * Whether the greeting of a call from `callerNumber` was chosen with something `may` does not show:
 * the caller's contact (its names fill the greeting, its tags pick variants) or their calls today.
 */
export function greetingWithheld(
  { config, contacts }: Surroundings,
  callerNumber: string | null,
  may: CallerDisclosure,
): boolean {
  if (callerNumber === null) return false;
  return (!may.contact && contacts.has(callerNumber)) || (!may.callsToday && countsCallsToday(config));
}

/**
 * The surroundings of `agent` from the surroundings columns read for `numbers` (distinct) in
 * SimulationRepository; `tools` replaces the stored tools (a version's snapshot).
 */
export function surroundingsFrom(
  agent: SimulatedAgent,
  around: CallSurroundings,
  numbers: readonly string[],
  tools?: readonly ToolSnapshot[],
): Surroundings {
  const config: CallConfiguration = {
    agent: agent as CallConfiguration['agent'],
    backup: around.backup,
    employees: around.employees,
    slots: around.slots,
    tools: tools ?? around.tools,
  };
  // As GreetingContactRepository.findByPhone picks: the most recently updated contact with the number.
  const contacts = new Map<string, CallerContact>();
  for (const n of numbers) {
    const c = around.contacts.find((k) => k.phone_number === n || k.mobile_number === n || k.landline_number === n);
    if (c) {
      const { id, first_name, last_name, salutation, tags } = c;
      contacts.set(n, { id, first_name, last_name, salutation, tags });
    }
  }
  return { config, contacts };
}

/**
 * Simulates calls against one configuration: loads what the call can reach (one query), finds the
 * callers' contacts, and asks the one call decision (agents/call-decision.ts). Every read can run
 * inside a write's transaction, so the guard sees the state after the write.
 */
export class CallSimulator {
  constructor(
    private readonly repository: SimulationRepository,
    private readonly countCallsToday: CallsTodayCounter,
  ) {}

  /**
   * The full configuration of `agent` (`tools` replaces the stored tools: a version's snapshot) and
   * the contacts of `callerNumbers`, in one query.
   */
  async configuration(
    agent: SimulatedAgent,
    callerNumbers: readonly string[],
    tools?: readonly ToolSnapshot[],
    trx?: Knex.Transaction,
  ): Promise<Surroundings> {
    const repository = trx ? this.repository.with(trx) : this.repository;
    const numbers = [...new Set(callerNumbers)];
    const around = await repository.surroundings(agent, (agent.backup_agent_id as string | null) ?? null, numbers);
    return surroundingsFrom(agent, around, numbers, tools);
  }

  /**
   * Every moment against `config`, contacts looked up once per distinct number (in parallel).
   * `countCalls` false: today's calls are not counted (0), for a caller who may not read them.
   */
  async simulate(
    agent: SimulatedAgent,
    { config, contacts }: Surroundings,
    moments: readonly Moment[],
    countCalls = true,
  ): Promise<Simulation[]> {
    const countsCalls = countCalls && countsCallsToday(config);
    return Promise.all(
      moments.map(async ({ at, callerNumber }) => {
        const contact = callerNumber ? (contacts.get(callerNumber) ?? null) : null;
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

  /**
   * Runs the cases against `config`: each case is one simulated moment compared with its
   * expectations. The verdicts read everything a call reads (they are the guard's); a greeting
   * chosen with what `may` does not show is reported as `actual: null`.
   */
  async run(
    agent: SimulatedAgent,
    surroundings: Surroundings,
    cases: readonly TestCaseRow[],
    may: CallerDisclosure = FULL_DISCLOSURE,
  ): Promise<RunResult> {
    const moments = momentsOf(cases);
    const simulations = await this.simulate(agent, surroundings, moments);
    const results = cases.map((c, i) => {
      const withheld = greetingWithheld(surroundings, moments[i]!.callerNumber, may);
      const mismatches = mismatchesOf(c.expect, simulations[i]!).map((m) =>
        withheld && m.field === 'greeting_contains' ? { ...m, actual: null } : m,
      );
      return { id: c.id, name: c.name, passed: mismatches.length === 0, mismatches };
    });
    const passed = results.filter((r) => r.passed).length;
    return { passed, failed: results.length - passed, results };
  }
}
