import type { Knex } from 'knex';
import { inTransaction, type Db } from '../db/knex.js';
import { isRetryableConflict } from '../db/pg-errors.js';
import type { Statement } from '../db/statement.js';
import type { AuditRecorder } from './audit-recorder.js';

/**
 * The transactions of a request's writes. `transaction(work)` is `inTransaction(db, work)` (one
 * retry after a lost race, `dryRun` rolled back) that, once `work` succeeded and before the commit,
 * writes the audit row of the write request being served, in the same transaction: the change and
 * its row commit together or not at all. A dry run writes no row. Outside a write request (a
 * background job, the CLI) there is no row to write and it is a plain transaction.
 *
 * A service that writes takes it in its constructor (`audited: AuditedTransactions`) and opens
 * every transaction through it; background workers take the plain `Db` and `inTransaction`.
 */
export class AuditedTransactions {
  constructor(
    private readonly db: Db,
    private readonly recorder: AuditRecorder,
  ) {}

  /**
   * `auditFirst`: the row is written before `work` instead of after it (still in its transaction),
   * for work that holds a lock to its commit (a claim's per-agent dispatch lock): the lock is
   * then not held over the row's insert. When `work` fails the row is rolled back with it, and a
   * retried transaction writes it again.
   */
  transaction<T>(
    work: (trx: Knex.Transaction) => Promise<T>,
    options: { dryRun?: boolean; auditFirst?: boolean } = {},
  ): Promise<T> {
    if (options.dryRun) return inTransaction(this.db, work, options);
    return inTransaction(this.db, async (trx) => {
      if (options.auditFirst) await this.recorder.inTransaction(trx);
      let result: T;
      try {
        result = await work(trx);
      } catch (error) {
        if (options.auditFirst) this.recorder.rolledBack();
        throw error;
      }
      await this.recorder.inTransaction(trx);
      return result;
    }).then((result) => {
      this.recorder.committed();
      return result;
    });
  }

  /**
   * `transaction` whose `work` writes the request's audit row (`audit`, none outside a write
   * request) as part of one of its own statements: for work whose first statement takes locks held
   * to the commit (a claim's dispatch locks), the row is written in that statement, in the same
   * round trip, instead of one before it. A failed `work` wrote no row, as `statement`; `only` as
   * for `statement`.
   */
  async transactionWithRow<T>(
    work: (trx: Knex.Transaction, audit: readonly Statement[]) => Promise<T>,
    only?: { when: string; wrote: (result: T) => boolean },
  ): Promise<T> {
    return this.withRow(only, (audit) => inTransaction(this.db, (trx) => work(trx, audit)));
  }

  /**
   * A write that is one statement: `work` runs, on the pool and without a transaction, one statement
   * that includes the statements `audit` holds (the request's audit row, `oneStatement`; none
   * outside a write request): the change and its row are written together or not at all, in one
   * round trip instead of four (BEGIN, the row, the change, COMMIT), and no lock the change takes is
   * held past its statement. One retry after a lost race, as `transaction`. A failed `work` wrote
   * no row: the request's row is then written after it, as for a write without a transaction.
   *
   * `only`: a statement that may find nothing to change (then the request goes on another way, and
   * that way writes the row): its row is written only when `only.when` (SQL over the statement)
   * holds, and `only.wrote(result)` tells whether it did.
   */
  async statement<T>(
    work: (db: Db, audit: readonly Statement[]) => Promise<T>,
    only?: { when: string; wrote: (result: T) => boolean },
  ): Promise<T> {
    return this.withRow(only, async (audit) => {
      try {
        return await work(this.db, audit);
      } catch (error) {
        if (!isRetryableConflict(error)) throw error;
        return work(this.db, audit);
      }
    });
  }

  /**
   * `run` with the request's audit row as statements to include: a failed `run` wrote no row; after
   * it, the row is announced, or rolled back when `only` says `run` did not write it.
   */
  private async withRow<T>(
    only: { when: string; wrote: (result: T) => boolean } | undefined,
    run: (audit: readonly Statement[]) => Promise<T>,
  ): Promise<T> {
    let result: T;
    let audit: readonly Statement[];
    try {
      audit = await this.recorder.statement(only?.when);
      result = await run(audit);
    } catch (error) {
      this.recorder.rolledBack();
      throw error;
    }
    // No row to write (an earlier transaction of the request wrote it): none was rolled back either.
    if (only && audit.length > 0 && !only.wrote(result)) this.recorder.rolledBack();
    await this.recorder.announce();
    return result;
  }
}
