import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createDb, type Db, type DbOptions } from './knex.js';

/**
 * Read replicas (DATABASE_REPLICA_URLS): PostgreSQL streaming standbys that the heavy reads (calls
 * lists and search, statistics) go to while they are healthy; everything else reads the primary.
 *
 * Health: every `checkIntervalMs` the primary's WAL position is sampled and each replica is asked
 * whether it is still a standby and how far it has replayed. A replica's lag is the age of the
 * newest primary sample its replay position has reached, so an idle primary never makes a replica
 * look late and a standby cut off from its primary is late as soon as the primary writes. A
 * replica that does not answer within `checkTimeoutMs`, answers that it is no standby any more
 * (promoted), or lags more than `maxLagMs` leaves the rotation at once and is taken back on the
 * first check that finds it healthy: dropped within checkIntervalMs + checkTimeoutMs (1.5 s by
 * default).
 *
 * A read that fails on a replica between two checks (it went down just now) is marked unhealthy
 * and run again on the primary: the client never sees the replica's failure.
 *
 * Read your writes: a caller (API key, or user for tokens) that wrote reads from the primary until
 * a replica has replayed past the write, so a list right after a create shows it, on whichever
 * instance the list arrives. The write is known by the instance that made it (after its commit) and
 * announced to the others on the channel they share (`hear`): one `pg_notify` inside the write's
 * transaction, delivered at its commit, before the write answers. A replica serves the caller again
 * once it has replayed a primary WAL position sampled after the write was known. Nothing is asked on
 * the read path: the decision uses the health checks' samples and a map of recent writers. While the
 * instance does not hear the channel (its listener down or late), a caller's reads go to the primary.
 */
export type ReplicaOptions = {
  maxLagMs: number;
  checkIntervalMs?: number;
  checkTimeoutMs?: number;
  poolMax: number;
  dbOptions?: DbOptions;
};

export type ReplicaStatus = { url: string; healthy: boolean; lagMs: number | null; reason: string | null };

type Replica = {
  url: string;
  db: Db;
  healthy: boolean;
  lagMs: number | null;
  reason: string | null;
  /** When the newest primary WAL sample that this replica has replayed was taken. */
  reachedAt: number;
};

/** The notification channel the instances share (the read cache's listener, src/cache). */
export type WriteChannel = {
  name: string;
  /** Whether this instance receives the channel's notifications now (listener up, lease fresh). */
  hearing(): boolean;
  /** Hands every payload that starts with `prefix` to `handler`, without it. */
  subscribe(prefix: string, handler: (rest: string) => void): void;
};

/** The payload prefix of a write's announcement: `vamw:<reader key>`. */
const WROTE = 'vamw:';

/** The caller a read belongs to, for read-your-writes. */
export type Reader = { apiKeyId: string | null; userId: string };

/** Runs one statement of a read on the database its routing chose (ReadRouting.statements). */
export type Statements = <T>(work: (db: Db) => Promise<T>) => Promise<T>;

/** Every statement on `db` (a read that is not routed, or one inside a transaction). */
export function statementsOn(db: Db | Knex.Transaction): Statements {
  return (work) => work(db);
}

/** Errors of the application (a 4xx decided by the work itself) are not the replica's fault. */
export type IsClientError = (error: unknown) => boolean;

function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** The URL without its credentials, for logs and status. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

function readerKey(reader: Reader): string {
  return reader.apiKeyId ?? `user:${reader.userId}`;
}

export class ReadRouting {
  private readonly replicas: Replica[];
  private readonly samples: { at: number; lsn: bigint }[] = [];
  /** Callers that wrote, by reader key: when the write was known here (after its commit). */
  private readonly writes = new Map<string, number>();
  private channel: WriteChannel | undefined;
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly checkIntervalMs: number;
  private readonly checkTimeoutMs: number;

  constructor(
    readonly primary: Db,
    urls: readonly string[],
    private readonly options: ReplicaOptions,
    private readonly logger: Logger,
    private readonly isClientError: IsClientError = () => false,
    private readonly now: () => number = Date.now,
  ) {
    this.checkIntervalMs = options.checkIntervalMs ?? 500;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 1000;
    this.replicas = urls.map((url) => ({
      url,
      db: createDb(url, options.poolMax, logger, {
        ...options.dbOptions,
        connectTimeoutMs: this.checkTimeoutMs,
        acquireTimeoutMs: this.checkTimeoutMs,
      }),
      // Out of the rotation until the first check finds it healthy.
      healthy: false,
      lagMs: null,
      reason: 'not checked yet',
      reachedAt: -Infinity,
    }));
  }

  get configured(): boolean {
    return this.replicas.length > 0;
  }

  /** The first check, then one every checkIntervalMs. */
  async start(): Promise<void> {
    if (!this.configured) return;
    await this.check();
    this.timer = setInterval(() => {
      if (!this.checking) this.checking = this.check().finally(() => (this.checking = undefined));
    }, this.checkIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
    await Promise.all(this.replicas.map((r) => r.db.destroy()));
  }

  status(): ReplicaStatus[] {
    return this.replicas.map(({ url, healthy, lagMs, reason }) => ({
      url: redact(url),
      healthy,
      lagMs,
      reason,
    }));
  }

  /**
   * Hears other instances' writes on `channel` (and announces this instance's there). Without a
   * channel (the read cache off) read-your-writes holds on the instance that took the write only.
   */
  hear(channel: WriteChannel): void {
    if (!this.configured) return;
    this.channel = channel;
    channel.subscribe(WROTE, (key) => this.remember(key));
  }

  /**
   * The caller is writing: called inside the write's transaction (`trx`), which then announces the
   * write to the other instances at its commit; without `trx` (the write committed already) the
   * announcement goes out at once. Marks the caller here too; `wrote` marks it again after the
   * commit, which is when the replicas' positions start to count.
   */
  async noteWrite(reader: Reader | undefined, trx?: Knex.Transaction): Promise<void> {
    if (!reader || !this.configured) return;
    const key = readerKey(reader);
    this.remember(key);
    if (this.channel) await (trx ?? this.primary).raw('SELECT pg_notify(?, ?)', [this.channel.name, WROTE + key]);
  }

  /** The caller's write has committed (it was announced inside its transaction). */
  wrote(reader: Reader | undefined): void {
    if (reader && this.configured) this.remember(readerKey(reader));
  }

  private remember(key: string): void {
    this.writes.set(key, this.now());
    if (this.writes.size > 10_000) {
      // Older writes than this are behind every replica in the rotation (see pick).
      const horizon = this.now() - this.options.maxLagMs - this.checkIntervalMs - this.checkTimeoutMs;
      for (const [k, at] of this.writes) if (at < horizon) this.writes.delete(k);
    }
  }

  /**
   * A healthy replica (in turn), or the primary when there is none. A caller that wrote gets only a
   * replica that has replayed a primary position sampled after the write was known here (so it
   * holds the write); one in the rotation has replayed everything older than its lag bound.
   */
  pick(reader?: Reader): Db {
    if (!this.configured) return this.primary;
    let healthy = this.replicas.filter((r) => r.healthy);
    if (reader && healthy.length > 0) {
      // Deaf to the other instances: a write made through one of them could not be known here.
      if (this.channel && !this.channel.hearing()) return this.primary;
      const wrote = this.writes.get(readerKey(reader));
      if (wrote !== undefined) healthy = healthy.filter((r) => r.reachedAt > wrote);
    }
    if (healthy.length === 0) return this.primary;
    return healthy[this.next++ % healthy.length]!.db;
  }

  /**
   * Runs `work` on `pick(reader)`; when a replica fails it (anything but the work's own client
   * error), the replica leaves the rotation and `work` runs again on the primary.
   */
  read<T>(reader: Reader | undefined, work: (db: Db) => Promise<T>): Promise<T> {
    return this.statements(reader)(work);
  }

  /**
   * The statements of one read that takes several (an export's batches) on one database: the one
   * `pick(reader)` gives, kept while it stays in the rotation. A statement that the replica fails,
   * or that comes after the replica left the rotation (lagging, promoted), runs on the primary, and
   * so do the rest: each statement is complete in itself (a keyset batch), so the read goes on where
   * it was.
   */
  statements(reader: Reader | undefined): Statements {
    let db = this.pick(reader);
    return async (work) => {
      const replica = db === this.primary ? undefined : this.replicas.find((r) => r.db === db);
      if (!replica?.healthy) db = this.primary;
      if (db === this.primary) return work(db);
      try {
        return await work(db);
      } catch (error) {
        if (this.isClientError(error)) throw error;
        this.markUnhealthy(replica!, `read failed: ${(error as Error).message}`);
        db = this.primary;
        return work(db);
      }
    };
  }

  /** One round of health checks (the timer's; tests call it to step without waiting). */
  async check(): Promise<void> {
    const at = this.now();
    try {
      const { rows } = await this.withTimeout(this.primary.raw(`SELECT pg_current_wal_lsn()::text AS lsn`));
      this.samples.push({ at, lsn: parseLsn(rows[0].lsn) });
    } catch (error) {
      // Without a primary sample the lag of this round is judged against the older samples.
      this.logger.warn({ err: error }, 'replicas: the primary did not give its WAL position');
    }
    const horizon = at - 4 * this.options.maxLagMs - 4 * this.checkIntervalMs;
    while (this.samples.length > 2 && this.samples[0]!.at < horizon) this.samples.shift();
    await Promise.all(this.replicas.map((replica) => this.checkOne(replica)));
  }

  private async checkOne(replica: Replica): Promise<void> {
    try {
      const { rows } = await this.withTimeout(
        replica.db.raw(`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed`),
      );
      const { standby, replayed } = rows[0] as { standby: boolean; replayed: string | null };
      if (!standby || replayed === null) return this.markUnhealthy(replica, 'not a standby (promoted?)');
      const position = parseLsn(replayed);
      let reached: number | undefined;
      for (const sample of this.samples) if (sample.lsn <= position) reached = sample.at;
      const lagMs = reached === undefined ? null : Math.max(0, this.now() - reached);
      replica.lagMs = lagMs;
      if (reached !== undefined) replica.reachedAt = reached;
      if (lagMs === null || lagMs > this.options.maxLagMs) {
        return this.markUnhealthy(replica, `lag ${lagMs ?? 'unknown'} ms over ${this.options.maxLagMs}`);
      }
      if (!replica.healthy)
        this.logger.info({ replica: redact(replica.url), lag_ms: lagMs }, 'replica in the rotation');
      replica.healthy = true;
      replica.reason = null;
    } catch (error) {
      this.markUnhealthy(replica, `no answer: ${(error as Error).message}`);
    }
  }

  private markUnhealthy(replica: Replica, reason: string): void {
    if (replica.healthy) this.logger.warn({ replica: redact(replica.url), reason }, 'replica left the rotation');
    replica.healthy = false;
    replica.reason = reason;
  }

  private withTimeout<T>(query: PromiseLike<T> & { timeout?: unknown }): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.checkTimeoutMs} ms`)), this.checkTimeoutMs);
    });
    return Promise.race([Promise.resolve(query), timeout]).finally(() => clearTimeout(timer));
  }
}
