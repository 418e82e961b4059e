import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Db } from './knex.js';

/**
 * Monthly RANGE partitions (UTC months) of the tables listed in `partitioned_tables` (calls,
 * events, webhook_deliveries, webhook_delivery_attempts, audit_log; see the migration
 * 20261129140000_partition_by_month). Partitions are named `<table>_pYYYY_MM`; each table also has
 * `<table>_default`, which takes a row whose month has no partition yet, so a write never fails.
 *
 * `ensure` creates the months from the current one to `monthsAhead` ahead and moves whatever sits in
 * the default partition into partitions of its own months. It runs at start and daily (a pg-boss
 * schedule: one instance per run); concurrent runs wait for each other on an advisory lock per table
 * and find the work done. `dropMonthsBefore` detaches and drops whole months in one statement each.
 */
export type PartitionedTable = { table_name: string; partition_key: string };

export type EnsureResult = { created: string[]; movedFromDefault: number };

/** DDL waits at most this long for the table's lock, so a long query never queues the traffic behind it. */
const LOCK_TIMEOUT = '3s';

const q = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function addMonths(month: Date, n: number): Date {
  return new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + n, 1));
}

export function partitionName(table: string, month: Date): string {
  return `${table}_p${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

const PARTITION_NAME = /_p(\d{4})_(\d{2})$/;

export class PartitionMaintenance {
  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly monthsAhead = 3,
  ) {}

  /** The partitioned tables and their keys; none before the migration ran. */
  async tables(): Promise<PartitionedTable[]> {
    const { rows: found } = await this.db.raw(`SELECT to_regclass('partitioned_tables') IS NOT NULL AS found`);
    if (!found[0].found) return [];
    const { rows } = await this.db.raw(`SELECT table_name, partition_key FROM partitioned_tables ORDER BY table_name`);
    return rows as PartitionedTable[];
  }

  /** The month partitions of `table`, oldest first. */
  async months(table: string): Promise<{ name: string; month: Date }[]> {
    const { rows }: { rows: { name: string }[] } = await this.db.raw(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = ?::regclass ORDER BY c.relname`,
      [table],
    );
    return rows.flatMap(({ name }) => {
      const match = PARTITION_NAME.exec(name);
      return match ? [{ name, month: new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) }] : [];
    });
  }

  /**
   * Every table: the months from `since` (default: the current one) to `monthsAhead` ahead exist,
   * the default partition is empty.
   */
  async ensure(now: Date, since: Date = now): Promise<EnsureResult> {
    const result: EnsureResult = { created: [], movedFromDefault: 0 };
    for (const table of await this.tables()) {
      const one = await this.ensureTable(table, now, since);
      result.created.push(...one.created);
      result.movedFromDefault += one.movedFromDefault;
    }
    if (result.created.length > 0 || result.movedFromDefault > 0) {
      this.logger.info(
        { partitions: result.created, moved_from_default: result.movedFromDefault },
        'partitions: months created',
      );
    }
    return result;
  }

  /** `ensure`, a failure logged instead of thrown (at start: the schedule tries again). */
  async ensureOrLog(now: Date): Promise<void> {
    try {
      await this.ensure(now);
    } catch (error) {
      this.logger.warn({ err: error }, 'partitions: the coming months could not be made now; the schedule retries');
    }
  }

  async ensureTable(
    { table_name: table, partition_key: key }: PartitionedTable,
    now: Date,
    since: Date = now,
  ): Promise<EnsureResult> {
    return this.db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [`partitions:${table}`]);
      const existing = new Set((await this.months(table)).map((p) => p.name));
      const current = monthStart(now);
      const wanted = new Map<string, Date>();
      for (let month = monthStart(since); month <= addMonths(current, this.monthsAhead); month = addMonths(month, 1)) {
        wanted.set(partitionName(table, month), month);
      }
      const { rows: stray }: { rows: { month: Date }[] } = await trx.raw(
        `SELECT DISTINCT date_trunc('month', ${q(key)}, 'UTC') AS month FROM ${q(`${table}_default`)}`,
      );
      for (const { month } of stray) wanted.set(partitionName(table, month), month);
      const result: EnsureResult = { created: [], movedFromDefault: 0 };
      const missing = [...wanted].filter(([name]) => !existing.has(name)).sort(([a], [b]) => a.localeCompare(b));
      if (missing.length === 0) return result;
      // A partition cannot be created while the default partition holds rows of its range: the
      // default is detached, its rows of those months moved, and attached again, all in this transaction.
      const detach = stray.length > 0;
      if (detach) await trx.raw(`ALTER TABLE ${q(table)} DETACH PARTITION ${q(`${table}_default`)}`);
      for (const [name, month] of missing) {
        // DDL takes no parameters; both bounds are ISO timestamps made here.
        await trx.raw(
          `CREATE TABLE ${q(name)} PARTITION OF ${q(table)}
             FOR VALUES FROM ('${month.toISOString()}') TO ('${addMonths(month, 1).toISOString()}')`,
        );
        result.created.push(name);
        if (detach) result.movedFromDefault += await this.moveFromDefault(trx, table, key, name, month);
      }
      if (detach) await trx.raw(`ALTER TABLE ${q(table)} ATTACH PARTITION ${q(`${table}_default`)} DEFAULT`);
      return result;
    });
  }

  /**
   * Rows of `month` from the detached default partition into its new partition, directly (the
   * parent's statement triggers, which keep counters and keys, do not see a move).
   */
  private async moveFromDefault(
    trx: Knex.Transaction,
    table: string,
    key: string,
    partition: string,
    month: Date,
  ): Promise<number> {
    const range = [month.toISOString(), addMonths(month, 1).toISOString()];
    const { rowCount } = await trx.raw(
      `WITH moved AS (DELETE FROM ${q(`${table}_default`)} WHERE ${q(key)} >= ? AND ${q(key)} < ? RETURNING *)
       INSERT INTO ${q(partition)} SELECT * FROM moved`,
      range,
    );
    return rowCount ?? 0;
  }

  /**
   * Drops every month partition of `table` that ends at or before `cutoff` (`DROP TABLE` of a
   * partition detaches and drops it in one statement). Returns the dropped partitions' names.
   */
  async dropMonthsBefore(table: string, cutoff: Date): Promise<string[]> {
    const dropped: string[] = [];
    for (const { name, month } of await this.months(table)) {
      if (addMonths(month, 1).getTime() > cutoff.getTime()) continue;
      await this.db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
        await trx.raw(`DROP TABLE ${q(name)}`);
      });
      dropped.push(name);
    }
    if (dropped.length > 0) this.logger.info({ partitions: dropped }, 'partitions: months past retention dropped');
    return dropped;
  }
}
