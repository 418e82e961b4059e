import type { Knex } from 'knex';
import { TestCasesFailedError, type ErrorDetail } from '../../errors/index.js';
import type { AgentChangeGuard } from '../agents/agent-change-guard.js';
import type { AgentRow } from '../agents/agent.repository.js';
import { NO_DISCLOSURE } from '../agents/caller-disclosure.js';
import { callerNumbersOf, momentsOf, type CallSimulator } from './call-simulator.js';
import type { TestCaseResult } from './simulation.schemas.js';
import type { SimulationRepository } from './simulation.repository.js';

function show(value: unknown): string {
  return JSON.stringify(value);
}

/** A failing case of a guarded agent, with the agent it belongs to. */
export type GuardedFailure = TestCaseResult & { agent_id: string; agent_name: string };

/**
 * One detail per mismatch: `test_cases.<id>.expect.<field>`, with the agent, the case and both
 * values. A case of another agent than the written one (`agentId`) names that agent in the message.
 */
export function failureDetails(failed: readonly GuardedFailure[], agentId: string): ErrorDetail[] {
  return failed.flatMap((result) =>
    result.mismatches.map((m) => ({
      field: `test_cases.${result.id}.expect.${m.field}`,
      message: `${result.agent_id === agentId ? '' : `Agent ${show(result.agent_name)}, `}"${result.name}": ${m.field} expected ${show(m.expected)}, got ${show(m.actual)}`,
      agent_id: result.agent_id,
      case_id: result.id,
      case_name: result.name,
      expected: m.expected,
      actual: m.actual,
    })),
  );
}

/**
 * The guard behind `require_passing_test_cases`: inside a write's transaction, after the write, it
 * runs the agent's saved cases against the state the transaction sees. `failures` only reports (a
 * dry run shows them); `assertPasses` refuses with 409 TEST_CASES_FAILED, which rolls the write back.
 * The flag is read after the write, so switching it off always goes through.
 */
export class TestCaseGuard implements AgentChangeGuard {
  constructor(
    private readonly repository: SimulationRepository,
    private readonly simulator: CallSimulator,
  ) {}

  /**
   * The failing cases of the agent and of every guarded agent whose backup it is (their calls read
   * whether it is active); empty when none of them requires passing cases or has any.
   */
  async failures(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<GuardedFailure[]> {
    const found = await this.repository.with(trx).agentWithCases(agent);
    if (!found) return [];
    const failed = await this.failuresOf(trx, found);
    for (const id of found.guarded_referrers) {
      const referrer = await this.repository.with(trx).agentWithCases({ id, organization_id: agent.organization_id });
      if (referrer) failed.push(...(await this.failuresOf(trx, referrer)));
    }
    return failed;
  }

  async assertPasses(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<void> {
    const failed = await this.failures(trx, agent);
    if (failed.length === 0) return;
    const others = failed.some((f) => f.agent_id !== agent.id);
    throw new TestCasesFailedError(
      `The change would make ${failed.length} test case${failed.length === 1 ? '' : 's'} of ${others ? 'guarded agents' : 'the agent'} fail; nothing was changed`,
      failureDetails(failed, agent.id),
    );
  }

  /** The failing cases of one agent, as this transaction sees it. */
  private async failuresOf(
    trx: Knex.Transaction,
    { row, has_cases }: { row: AgentRow; has_cases: boolean },
  ): Promise<GuardedFailure[]> {
    if (!row.require_passing_test_cases || !has_cases) return [];
    const cases = await this.repository.with(trx).listCases(row.id);
    const surroundings = await this.simulator.configuration(row, callerNumbersOf(momentsOf(cases)), undefined, trx);
    // The 409 goes to whoever wrote (agents:write, contacts:write...): it shows no greeting chosen
    // with the caller's contact or calls; POST .../test-cases/run shows it to who may read them.
    const run = await this.simulator.run(row, surroundings, cases, NO_DISCLOSURE);
    return run.results.filter((r) => !r.passed).map((r) => ({ ...r, agent_id: row.id, agent_name: row.name }));
  }

  async check(
    trx: Knex.Transaction,
    agent: { id: string; organization_id: string },
    dryRun = false,
  ): Promise<readonly string[]> {
    if (!dryRun) {
      await this.assertPasses(trx, agent);
      return [];
    }
    return (await this.failures(trx, agent)).map((result) => result.id);
  }
}
