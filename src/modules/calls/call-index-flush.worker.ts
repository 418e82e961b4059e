import type { Logger } from 'pino';
import type { Db } from '../../db/knex.js';
import { PollLoop } from '../../jobs/poll-loop.js';
import type { BackgroundWorker } from '../../jobs/workers.js';

/** How often the pending lists are merged: well before an intake fills one (see CallIndexFlushWorker). */
export const CALL_INDEX_FLUSH_MS = 1000;

/**
 * Every GIN index of every month's calls (search text, outcome text, extracted data), its pending
 * list merged into the index: the number of pending pages merged, or null when another instance
 * holds the lock and is merging them (this one skips its turn rather than wait behind it). The
 * THEN's subquery runs only once the CASE has the lock.
 */
const FLUSH = `
  SELECT CASE WHEN pg_try_advisory_xact_lock(hashtextextended('call_index_flush', 0)) THEN
    (SELECT coalesce(sum(gin_clean_pending_list(i.indexrelid)), 0)
       FROM pg_inherits p
       JOIN pg_index i ON i.indrelid = p.inhrelid
       JOIN pg_class x ON x.oid = i.indexrelid
       JOIN pg_am am ON am.oid = x.relam AND am.amname = 'gin'
      WHERE p.inhparent = 'calls'::regclass)
  END AS pages`;

/**
 * Merges the pending lists of the calls' GIN indexes every second, so that a call intake never
 * does. A GIN index takes a new row's entries into a pending list, cheap to append to, and the
 * insert that finds the list past gin_pending_list_limit (4 MB) merges all of it into the index
 * before its statement goes on: 65 ms for the search index's 489 pages at 1M calls on a 2-vCPU
 * machine, more at 10M, about every 1,300 calls of `npm run bench -- calls` intake, and each time
 * a whole batch of calls (up to 16, src/db/statement-batches.ts) waited for it: more than 1% of
 * the calls, so it set the intake's p99. A search also reads the whole pending list on every
 * query. Merged every second the list holds about a second of calls (the bench's 500 calls/s of
 * short calls add about 1.6 MB/s to the search index's list). Calls with long transcripts can fill
 * it within the second; their intake then merges as before, no worse. The merge costs the same
 * wherever it runs: PostgreSQL does it here instead of in a request. It is upkeep, not a worker
 * (src/modules/module.ts): every instance runs it, whatever WORKERS_ENABLED says, since an
 * instance that only serves requests would otherwise merge in its intake again; one at a time.
 */
export class CallIndexFlushWorker implements BackgroundWorker {
  readonly name = 'call-index-flush';
  private readonly loop: PollLoop;

  constructor(
    private readonly db: Db,
    logger: Logger,
    intervalMs = CALL_INDEX_FLUSH_MS,
  ) {
    this.loop = new PollLoop(
      async () => {
        await this.flush();
        return false;
      },
      { intervalMs, lingerMs: intervalMs },
      (error) => logger.warn({ err: error }, 'call index flush failed'),
    );
  }

  async start(): Promise<void> {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** One merge: the pending pages merged, null when another instance is merging. */
  async flush(): Promise<number | null> {
    const { rows } = (await this.db.raw(FLUSH)) as { rows: { pages: string | null }[] };
    return rows[0]!.pages === null ? null : Number(rows[0]!.pages);
  }
}
