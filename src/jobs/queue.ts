import type { Knex } from 'knex';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { DATABASE_TIMEOUT_DEFAULTS } from '../config.js';
import { connectionSettings } from '../db/knex.js';
import { SilenceWatchdog } from '../db/silence-watchdog.js';
import { queryOnConnection } from '../platform/knex.js';
import { QUEUE_DEFINITIONS } from './queue-definitions.js';

export type JobHandler<T> = (data: T, job: { id: string; name: string }) => Promise<void>;

/** pg-boss's Db interface over a knex transaction, so a job is enqueued in the caller's transaction. */
function knexExecutor(trx: Knex | Knex.Transaction): PgBoss.Db {
  return {
    // Inside a transaction knex hands out the transaction's own connection.
    executeSql: (text, values) => queryOnConnection(trx, { text, values }),
  };
}

/**
 * How often a supervising instance looks for jobs whose worker vanished (active past their expiry)
 * and queues them again. pg-boss's default is 120 s, which let an expired webhook send wait up to
 * two minutes more than the 60 s expiry docs/webhooks.md promises.
 */
export const SUPERVISE_INTERVAL_SECONDS = 10;

export type JobQueueOptions = {
  /** Supervise (expire, archive) and run schedules in this process. */
  background: boolean;
  /**
   * Drills and the cluster test: every job expires after this many seconds (and is retried after at
   * most as long), so the jobs of a killed instance come back within seconds instead of minutes.
   */
  expireSeconds?: number;
  /** DATABASE_CONNECT_TIMEOUT_MS, for the queue's own connections. */
  connectTimeoutMs?: number;
  /** DATABASE_SILENCE_MS, for the queue's own connections (0: off). */
  silenceMs?: number;
};

/** PostgreSQL going away: shut down (57P01-57P03), refused, reset, or the connection ended. */
function isConnectionLoss(error: Error & { code?: string }): boolean {
  if (error.code && /^57P0[123]$|^ECONNREFUSED$|^ECONNRESET$|^EPIPE$/.test(error.code)) return true;
  return /connection terminated|connection error|not queryable/i.test(error.message);
}

/** How long a lost connection waits to be logged, for a shutdown signal that arrives with it. */
const SHUTDOWN_SIGNAL_GRACE_MS = 250;

/** The queue's own connections, apart from the request pool: polling never takes a request's slot. */
const QUEUE_POOL_MAX = 4;

function shortenExpiry<T extends { expireInSeconds?: number; retryDelay?: number; retryBackoff?: boolean }>(
  options: T,
  seconds: number,
): T {
  return {
    ...options,
    expireInSeconds: seconds,
    retryDelay: Math.min(options.retryDelay ?? 0, seconds),
    retryBackoff: false,
  };
}

/**
 * The one durable job queue (pg-boss, in the same PostgreSQL). Jobs are enqueued inside the
 * transaction of the change that caused them; a job whose worker died is expired and retried by
 * pg-boss; each job is fetched by exactly one instance (SKIP LOCKED inside pg-boss).
 */
export class JobQueue {
  private stopping = false;
  private readonly listeners = new Map<string, Set<() => void>>();

  private constructor(
    readonly boss: PgBoss,
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
    private readonly expireSeconds?: number,
  ) {}

  static async start(url: string, logger: Logger, options: JobQueueOptions): Promise<JobQueue> {
    // pg-boss is given a pool made here (rather than making its own) so that the queue's
    // connections have the same bounds as the request pool's: a bounded handshake, keepalive, and
    // the silence watchdog, which cuts a poll whose answer was lost instead of leaving it hanging.
    const pool = new pg.Pool({
      ...connectionSettings(url, options.connectTimeoutMs ?? DATABASE_TIMEOUT_DEFAULTS.connectTimeoutMs),
      max: QUEUE_POOL_MAX,
      application_name: 'pgboss',
    });
    const watchdog = new SilenceWatchdog({
      url,
      silenceMs: options.silenceMs ?? DATABASE_TIMEOUT_DEFAULTS.silenceMs,
      logger,
    });
    pool.on('connect', (client) => watchdog.watch(client));
    const boss = new PgBoss({
      db: { executeSql: (text, values) => pool.query(text, values) },
      schema: 'pgboss',
      supervise: options.background,
      schedule: options.background,
      migrate: true,
      maintenanceIntervalSeconds: Math.min(
        options.expireSeconds ?? SUPERVISE_INTERVAL_SECONDS,
        SUPERVISE_INTERVAL_SECONDS,
      ),
    });
    const queue = new JobQueue(boss, pool, logger, options.expireSeconds);
    // pg-boss errors carry the whole pg client; log only what helps. Once the process is shutting
    // down, losing the database is expected (Ctrl-C in a terminal stops the embedded PostgreSQL
    // together with node): not an error then. The pool's own errors (an idle connection lost) go
    // the same way: logged, never thrown. Ctrl-C reaches PostgreSQL and node at once, and its
    // "terminating connection" may arrive before node has seen the signal: a lost connection is
    // judged a moment later, when the shutdown, if it is one, has begun.
    const log = (error: Error & { code?: string }) => {
      const level = !queue.stopping ? 'error' : isConnectionLoss(error) ? 'debug' : 'warn';
      logger[level]({ error: error.message, code: error.code }, 'job queue error');
    };
    const onError = (error: Error & { code?: string }) => {
      if (queue.stopping || !isConnectionLoss(error)) log(error);
      else setTimeout(() => log(error), SHUTDOWN_SIGNAL_GRACE_MS).unref();
    };
    boss.on('error', onError);
    pool.on('error', onError);
    try {
      await boss.start();
      for (const { name, options: queueOptions } of QUEUE_DEFINITIONS) await queue.defineQueue(name, queueOptions);
    } catch (error) {
      // pg-boss does not close a pool it did not make.
      await boss.stop({ graceful: false, wait: true, close: true }).catch(() => {});
      await pool.end().catch(() => {});
      throw error;
    }
    return queue;
  }

  /** Installs pg-boss's schema (test template databases). */
  static async install(url: string, logger: Logger): Promise<void> {
    const queue = await JobQueue.start(url, logger, { background: false });
    await queue.stop();
  }

  /** Creates the queue, or brings an existing one to these options. */
  async defineQueue(name: string, queueOptions: Omit<PgBoss.Queue, 'name'>): Promise<void> {
    const options = this.expireSeconds ? shortenExpiry(queueOptions, this.expireSeconds) : queueOptions;
    await this.boss.createQueue(name, { name, ...options });
    await this.boss.updateQueue(name, { name, ...options });
  }

  /** Enqueues `data`; pass the transaction that makes the change so both commit or neither does. */
  async send(
    name: string,
    data: object,
    options: PgBoss.SendOptions & { trx?: Knex | Knex.Transaction } = {},
  ): Promise<void> {
    const { trx, ...given } = options;
    // A job's own expiry (knowledge-base jobs carry one) yields to the drill setting as the queue's does.
    const sendOptions = this.expireSeconds && given.expireInSeconds ? shortenExpiry(given, this.expireSeconds) : given;
    const id = await this.boss.send(name, data, { ...sendOptions, ...(trx ? { db: knexExecutor(trx) } : {}) });
    // pg-boss returns null (not an error) for a queue that does not exist: never lose a job silently.
    if (!id && !(await this.boss.getQueue(name)))
      throw new Error(`Job not enqueued: queue ${name} is not in QUEUE_DEFINITIONS`);
    this.notifyAfter(name, trx);
  }

  /**
   * pg-boss's own statement that enqueues `data` in `name` (what `send` runs, with pg-boss's options
   * and the queue's policy), for a caller that runs it inside a statement of its own, as a
   * data-modifying CTE; `queuedIn` after running it. Nothing is sent here.
   */
  async sendStatement(name: string, data: object): Promise<{ text: string; values: unknown[] }> {
    // Run as part of another statement, its answer is not seen: a missing queue is checked here.
    if (!QUEUE_DEFINITIONS.some((q) => q.name === name))
      throw new Error(`Job not enqueued: queue ${name} is not in QUEUE_DEFINITIONS`);
    let statement: { text: string; values: unknown[] } | undefined;
    const capture: PgBoss.Db = {
      executeSql: async (text, values) => {
        statement = { text, values: values ?? [] };
        return { rows: [{ id: 'captured' }] };
      },
    };
    await this.boss.send(name, data, { db: capture });
    if (!statement) throw new Error(`pg-boss made no statement for a job of ${name}`);
    return statement;
  }

  /**
   * `sendStatement` for a job that exists only when `condition` (SQL over the caller's statement,
   * such as `EXISTS (SELECT 1 FROM event)`) holds: otherwise the statement inserts nothing. pg-boss
   * joins a job's queue name to its queue; the name is made NULL when the condition fails, and
   * matches no queue (pinned in test/jobs/job-queue.test.ts).
   */
  async sendStatementIf(name: string, data: object, condition: string): Promise<{ text: string; values: unknown[] }> {
    const statement = await this.sendStatement(name, data);
    // pg-boss's values start (id, name, data, ...).
    if (statement.values[1] !== name) throw new Error(`pg-boss's job statement no longer takes the queue name as $2`);
    return { ...statement, text: statement.text.replace(/\$2(?!\d)/g, `(CASE WHEN ${condition} THEN $2::text END)`) };
  }

  /** After a `sendStatement` statement ran in `trx` (or without a transaction): as after `send`. */
  queuedIn(name: string, trx?: Knex | Knex.Transaction): void {
    this.notifyAfter(name, trx);
  }

  /**
   * Enqueues one job per entry of `data` in one statement (in `trx` when given, to start after
   * `startAfterSeconds` when given); nothing when empty.
   */
  async sendMany(
    name: string,
    data: object[],
    options: { trx?: Knex | Knex.Transaction; startAfterSeconds?: number } = {},
  ): Promise<void> {
    if (data.length === 0) return;
    // pg-boss's batch insert returns no ids, so a missing queue is checked against the definitions.
    if (!QUEUE_DEFINITIONS.some((q) => q.name === name))
      throw new Error(`Job not enqueued: queue ${name} is not in QUEUE_DEFINITIONS`);
    await this.boss.insert(
      data.map((d) => ({
        name,
        data: d,
        ...(options.startAfterSeconds ? { startAfter: String(options.startAfterSeconds) } : {}),
      })),
      options.trx ? { db: knexExecutor(options.trx) } : {},
    );
    this.notifyAfter(name, options.trx);
  }

  /**
   * Calls `listener` whenever this process queues a job of `name` (after the enqueuing transaction
   * commits), so that a worker here can fetch it at once instead of at its next poll. Jobs queued by
   * other processes are found by polling. Returns the unsubscribe function.
   */
  onQueued(name: string, listener: () => void): () => void {
    const set = this.listeners.get(name) ?? new Set();
    set.add(listener);
    this.listeners.set(name, set);
    return () => set.delete(listener);
  }

  private notifyAfter(name: string, trx: Knex | Knex.Transaction | undefined): void {
    const set = this.listeners.get(name);
    if (!set?.size) return;
    const notify = () => {
      for (const listener of set) listener();
    };
    // The outermost transaction's executionPromise settles when it commits or rolls back (a rollback
    // queued nothing); without a transaction the job is there already.
    let outer = trx as Partial<Knex.Transaction> | undefined;
    while (outer?.parentTransaction) outer = outer.parentTransaction;
    if (outer?.executionPromise) outer.executionPromise.then(notify, () => {});
    else notify();
  }

  /**
   * Background processing: pg-boss polls, and each job is handled once. After a job the worker
   * fetches again at once, so a backlog drains at the handlers' pace; only an idle worker waits
   * for the polling interval.
   */
  async work<T extends object>(name: string, handler: JobHandler<T>, pollingIntervalSeconds = 1): Promise<void> {
    const workerId: string = await this.boss.work<T>(name, { pollingIntervalSeconds, batchSize: 1 }, async ([job]) => {
      if (!job) return;
      try {
        await handler(job.data, job);
      } finally {
        this.boss.notifyWorker(workerId);
      }
    });
  }

  /** Takes up to `batchSize` ready jobs for a caller that completes or fails each itself. */
  fetch<T extends object>(name: string, batchSize: number): Promise<PgBoss.Job<T>[]> {
    return this.boss.fetch<T>(name, { batchSize });
  }

  /** Marks fetched jobs done, in `trx` when given (e.g. beside the `send` that replaces one, or the work it did). */
  async complete(name: string, id: string | string[], trx?: Knex | Knex.Transaction): Promise<void> {
    const ids = Array.isArray(id) ? id : [id];
    if (ids.length === 0) return;
    await this.settle('complete', name, ids, null, trx);
  }

  async fail(name: string, id: string | string[], error: unknown): Promise<void> {
    const ids = Array.isArray(id) ? id : [id];
    if (ids.length === 0) return;
    await this.settle('fail', name, ids, { message: error instanceof Error ? error.message : String(error) });
  }

  /**
   * pg-boss's complete/fail take (name, ids, data, options) at run time; its typings also offer
   * (name, ids, options), which would store the options as the job's output and run outside `trx`.
   */
  private async settle(
    how: 'complete' | 'fail',
    name: string,
    ids: string[],
    data: object | null,
    trx?: Knex | Knex.Transaction,
  ): Promise<void> {
    const settle = this.boss[how].bind(this.boss) as (
      name: string,
      ids: string[],
      data: object | null,
      options: PgBoss.ConnectionOptions,
    ) => Promise<unknown>;
    await settle(name, ids, data, trx ? { db: knexExecutor(trx) } : {});
  }

  /**
   * Handles every job of `name` that is ready now, in this call, and returns how many ran. Tests
   * and the CLI drive workers with it instead of waiting for a poll.
   */
  async runPending<T extends object>(name: string, handler: JobHandler<T>, max = 1000): Promise<number> {
    let ran = 0;
    while (ran < max) {
      const [job] = await this.boss.fetch<T>(name, { batchSize: 1 });
      if (!job) break;
      try {
        await handler(job.data, job);
        await this.boss.complete(name, job.id);
      } catch (error) {
        this.logger.error({ err: error, job: job.id, queue: name }, 'job failed');
        await this.boss.fail(name, job.id, { message: error instanceof Error ? error.message : String(error) });
      }
      ran += 1;
    }
    return ran;
  }

  /** Per defined queue: jobs waiting to run (created or retry) and the age of the oldest, for /metrics. */
  async waitingStats(): Promise<{ name: string; depth: number; oldestAgeSeconds: number }[]> {
    const result = (await this.boss.getDb().executeSql(
      `SELECT name, count(*)::int AS depth, EXTRACT(EPOCH FROM now() - min(created_on))::float8 AS oldest
         FROM pgboss.job WHERE state < 'active' GROUP BY name`,
      [],
    )) as { rows: { name: string; depth: number; oldest: number | null }[] };
    const byName = new Map(result.rows.map((row) => [row.name, row]));
    return QUEUE_DEFINITIONS.map(({ name }) => ({
      name,
      depth: byName.get(name)?.depth ?? 0,
      oldestAgeSeconds: Math.max(0, byName.get(name)?.oldest ?? 0),
    }));
  }

  /**
   * The process is shutting down: from now on a lost database connection is logged at debug level.
   * Called first thing on SIGTERM/SIGINT, before the drain.
   */
  expectShutdown(): void {
    this.stopping = true;
  }

  /** Stops fetching, lets running jobs finish for at most `timeoutMs`, closes the connections. */
  async stop(timeoutMs = 10_000): Promise<void> {
    this.stopping = true;
    await this.boss.stop({ graceful: true, timeout: Math.max(1000, timeoutMs), wait: true, close: true });
    if (!this.pool.ending) await this.pool.end();
  }
}
