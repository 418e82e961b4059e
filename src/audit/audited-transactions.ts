import type { Knex } from 'knex';
import { inTransaction, type Db } from '../db/knex.js';
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

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>, options: { dryRun?: boolean } = {}): Promise<T> {
    if (options.dryRun) return inTransaction(this.db, work, options);
    return inTransaction(this.db, async (trx) => {
      const result = await work(trx);
      await this.recorder.inTransaction(trx);
      return result;
    }).then((result) => {
      this.recorder.committed();
      return result;
    });
  }
}
