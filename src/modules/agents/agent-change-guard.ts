import type { Knex } from 'knex';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';

/**
 * Checked inside a configuration write's transaction, after the write: an agent with
 * `require_passing_test_cases` refuses the write (409 TEST_CASES_FAILED, so the transaction rolls
 * back) when one of its saved test cases fails against the new state; so does every such agent
 * whose backup is the written agent (its calls read whether the backup is active). The simulation
 * module implements it; the container hands it to every service whose writes change what a call
 * does (contacts included: they fill greetings).
 */
export type AgentChangeGuard = {
  /** The failing cases (empty: the write may stay); for a dry run, which shows them instead of refusing. */
  failures(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<FailingTestCase[]>;
  /** Throws 409 TEST_CASES_FAILED (rolling the transaction back) when `failures` finds any. */
  assertPasses(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<void>;
  /**
   * `assertPasses` for a real write (returns no ids); for a dry run (`dryRun` true) returns the ids
   * of the failing cases instead, which the service returns with its answer (`CheckedWrite`) and
   * the router names in `Test-Cases-Failed`.
   */
  check(
    trx: Knex.Transaction,
    agent: { id: string; organization_id: string },
    dryRun?: boolean,
  ): Promise<readonly string[]>;
};

/**
 * The answer of a write the guard checks and that can be dry-run: the resource, and the ids of the
 * saved test cases the change would make fail (a dry run's; empty for a real write, which fails
 * instead). The router sends `resource` and names the cases in `Test-Cases-Failed`.
 */
export type CheckedWrite<T> = { resource: T; failingTestCases: readonly string[] };

/**
 * A configuration write the guard checks, in one audited transaction: `write` changes the agent's
 * configuration and returns the resource, then the guard checks the agent (refusing the write, or
 * for a dry run naming the failing cases beside the resource). A dry run rolls the transaction back.
 */
export function checkedWrite<T>(
  audited: AuditedTransactions,
  guard: AgentChangeGuard,
  agent: { id: string; organization_id: string },
  dryRun: boolean | undefined,
  write: (trx: Knex.Transaction) => Promise<T>,
): Promise<CheckedWrite<T>> {
  return audited.transaction(
    async (trx) => {
      const resource = await write(trx);
      return { resource, failingTestCases: await guard.check(trx, agent, dryRun) };
    },
    { dryRun },
  );
}

export type FailingTestCase = {
  /** The agent whose case fails: the written one or an agent it is the backup of. */
  agent_id: string;
  id: string;
  name: string;
  passed: boolean;
  mismatches: { field: string; expected: unknown; actual: unknown }[];
};

/** For a service built without the guard (the default). */
export const NO_CHANGE_GUARD: AgentChangeGuard = {
  failures: async () => [],
  assertPasses: async () => {},
  check: async () => [],
};
