import type { Knex } from 'knex';

/**
 * The lock order. Every write transaction takes its locks in this order and never the other way
 * round, so two writes can wait for each other but never deadlock:
 *
 *   1. the organization (its row), when a write spans several agents of it;
 *   2. the agent (its row, FOR NO KEY UPDATE), before any write whose check reads another
 *      sub-resource of the agent: workflow replacement (reads the tools), tool create/update/delete
 *      (reads the workflow, the employee), employee update/delete (reads the linked tools);
 *   3. the resource itself: a tool, employee or document row, or the agent's slot list (advisory
 *      lock `forwarding_slots:<agent id>`, ids always in lower case);
 *   4. the rows below a document (its chunks, its grants): only after the document row, which a
 *      document delete takes first before its cascade reaches them, so a chunk delete, a content
 *      change and the processing worker lock the document row (FOR UPDATE) before touching chunks.
 *
 * FOR NO KEY UPDATE leaves foreign-key checks of inserts elsewhere (a call, a chunk) unblocked.
 * A deadlock or serialization failure that still happens is retried once by `inTransaction` and
 * otherwise answered 409 CONFLICT.
 */
export async function lockAgent(trx: Knex.Transaction, agent: { id: string; organization_id: string }): Promise<void> {
  await trx('agents').where({ id: agent.id, organization_id: agent.organization_id }).forNoKeyUpdate().first('id');
}
