import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';

type Work = (trx: Knex.Transaction) => Promise<unknown>;

/**
 * The database handle services get: the same knex, except that a transaction opened with
 * `db.transaction(work)` runs `beforeCommit(trx)` after `work` succeeded, inside the transaction.
 * The audit log uses it to write the row of the current request together with the change.
 */
export function withTransactionHook(db: Db, beforeCommit: (trx: Knex.Transaction) => Promise<void>): Db {
  const transaction = (work?: unknown, config?: Knex.TransactionConfig) => {
    if (typeof work !== 'function') return db.transaction(work as undefined, config);
    return db.transaction(async (trx) => {
      const result = await (work as Work)(trx);
      await beforeCommit(trx);
      return result;
    }, config);
  };
  return new Proxy(db, {
    get: (target, property, receiver) =>
      property === 'transaction' ? transaction : Reflect.get(target, property, receiver),
  });
}
