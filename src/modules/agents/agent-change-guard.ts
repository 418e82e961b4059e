import type { Knex } from 'knex';

/**
 * Checked inside a configuration write's transaction, after the write: an agent with
 * `require_passing_test_cases` refuses the write (409 TEST_CASES_FAILED, so the transaction rolls
 * back) when one of its saved test cases fails against the new state. The simulation module
 * implements it; the container hands it to every service whose writes change what a call does.
 */
export type AgentChangeGuard = {
  assertPasses(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<void>;
};

/** For a service built without the guard (the default). */
export const NO_CHANGE_GUARD: AgentChangeGuard = { assertPasses: async () => {} };
