import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { AgentRef } from '../auth/auth-context.js';
import type { ApiKeyCredential, CredentialsRepository, UserCredential } from '../auth/credentials.repository.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/knex.js';
import { CachePeers } from './cache-peers.js';

export const CACHE_CHANNEL = 'vam_cache';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
/**
 * Agents carry prompts (up to 50,000 characters) and workflows: besides the entry count, the agents
 * kept are bounded by their text size, so the cache stays well inside the production heap limit.
 */
const MAX_AGENT_CHARS = 20_000_000;
/** How long the listener waits for PostgreSQL to accept a connection before it tries again. */
const CONNECT_TIMEOUT_MS = 5_000;
/** The payloads `sync()` and the listener's first check send on the channel (`sync:<uuid>`, `pool:<uuid>`). */
const NONCE = /^(sync|pool):[0-9a-f-]{36}$/;

export type ReconnectOptions = {
  /** First wait after a lost or failed connection; doubles per failure up to `maxDelayMs`. */
  minDelayMs?: number;
  /** Cap of the wait between attempts (READ_CACHE_RECONNECT_MAX_MS). */
  maxDelayMs?: number;
  /**
   * How often the listening connection is probed with `SELECT 1`; no answer within the same time
   * counts as lost. Catches a connection that died silently (a NAT or firewall dropping an idle
   * connection), which would otherwise look alive while missing every announcement.
   */
  heartbeatMs?: number;
  /** CACHE_LEASE_MS: how long the cache is served without this instance hearing its own heartbeat. */
  leaseMs?: number;
  /** How long a new listening connection may take to hear a notification sent through the pool. */
  confirmMs?: number;
  /** The wait before the next attempt when the last one did not hear the pool (default 30 s). */
  mismatchDelayMs?: number;
};

/**
 * The listening connection works but does not hear the pool: a setting to fix, not an outage, so
 * attempts are repeated only every `mismatchDelayMs`. Behind a pooler in transaction mode each
 * attempt leaves its LISTEN on a server connection of the pooler, which then receives (and the
 * pooler logs) every notification.
 */
class ListenerMismatch extends Error {}

type Entry<T> = { value: T; at: number };
type Query = (text: string, values?: unknown[]) => Promise<unknown>;
/** Sends a payload on the cache channel through the request pool (DATABASE_URL). */
export type PoolNotify = (payload: string) => Promise<unknown>;

/** The PoolNotify of a knex pool. */
export function poolNotify(db: Db): PoolNotify {
  return (payload) => db.raw('SELECT pg_notify(?, ?)', [CACHE_CHANNEL, payload]);
}

/**
 * The listening connection's queries (heartbeat, peer rounds, sync) one after the other: a pg.Client
 * queues overlapping calls itself, but that is deprecated and goes away in pg 9.
 */
function oneAtATime(client: pg.Client): Query {
  let tail: Promise<unknown> = Promise.resolve();
  return (text, values) => {
    const run = tail.then(() => client.query(text, values));
    tail = run.catch(() => undefined);
    return run;
  };
}
/**
 * The agents module's read of an agent as a cache entry, whatever its organization (`agentEntries`,
 * src/modules/agents/agent-reads.ts): `A` is its AgentRow, which the cache keeps without looking
 * inside, frozen by the agents module since every request shares it.
 */
type AgentLoader<A extends AgentRef> = { findEntry(id: string): Promise<Readonly<A> | undefined> };

/**
 * Entries another module derives from tables of its own (the routing answer's numbers and agent
 * configurations, src/modules/runtime/route-reads.ts), kept by the read cache under the same rules as
 * its rows: served only while this instance hears the channel, dropped with the whole cache, and
 * dropped alone when one of `tables` announces a change (their triggers send the table's name), so a
 * change of a tool or an employee does not cost every key a database read. `load` runs on a miss.
 */
export class CacheRegion<T> {
  readonly entries = new Map<string, Entry<T>>();
  /** Bumped on every drop: a load that was under way then does not store its result. */
  generation = 0;

  constructor(
    private readonly owner: {
      readRegion<V>(region: CacheRegion<V>, id: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
    },
    readonly tables: ReadonlySet<string>,
  ) {}

  read(id: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    return this.owner.readRegion(this, id, load);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

/**
 * Rows read on nearly every request (a key with its creator's memberships, a user's memberships, an
 * agent) kept in memory, so that authentication and the agent check cost no database round trip.
 *
 * Safe because every change to those rows is announced by a trigger on `vam_cache` at commit, and
 * each instance drops its whole cache on any announcement. While the listening connection is down
 * the cache is bypassed (and emptied when it comes back), so a missed announcement can never leave a
 * revoked key usable. A read that was already under way when the cache was dropped does not store
 * its result (generation check), so it cannot put back a row from before the change.
 *
 * The listening connection is owned by one loop (`run`): connect, LISTEN, wait until the connection
 * ends or fails, close it, wait (capped exponential backoff), repeat until stopped. At any moment
 * the instance holds at most one listening connection, and a lost one is always closed before the
 * next is opened.
 */
export class ReadCache<A extends AgentRef> {
  private readonly keys = new Map<string, Entry<ApiKeyCredential>>();
  private readonly users = new Map<string, Entry<UserCredential>>();
  private readonly agents = new Map<string, Entry<Readonly<A>>>();
  private agentChars = 0;
  /** Bumped on every drop of the whole cache (as CacheRegion.generation for a region). */
  private readonly drops = { generation: 0 };
  private listener: Query | undefined;
  /** The loop's client, from before it connects until it is closed. */
  private current: pg.Client | undefined;
  private listening = false;
  private stopped = true;
  private loop: Promise<void> | undefined;
  /** Wakes the loop early: from its backoff wait when stopping, from its "connected" wait on loss. */
  private wake: (() => void) | undefined;
  private readonly syncWaiters = new Map<string, () => void>();
  private readonly minDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly heartbeatMs: number;
  private readonly confirmMs: number;
  private readonly mismatchDelayMs: number;
  /** Other instances' acknowledgements of changes, and this instance's lease on its cache. */
  readonly peers: CachePeers;
  /** The channel's name, for others that send on it (WriteChannel). */
  readonly name = CACHE_CHANNEL;
  private readonly subscribers: { prefix: string; handler: (rest: string) => void }[] = [];
  private readonly regions: CacheRegion<unknown>[] = [];

  constructor(
    private readonly credentials: CredentialsRepository<A>,
    private readonly agentLoader: AgentLoader<A>,
    /** DATABASE_LISTEN_URL, or DATABASE_URL without it. */
    private readonly listenUrl: string,
    private readonly notifyThroughPool: PoolNotify,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly enabled = true,
    reconnect: ReconnectOptions = {},
  ) {
    this.maxDelayMs = reconnect.maxDelayMs ?? 2000;
    this.minDelayMs = Math.min(reconnect.minDelayMs ?? 100, this.maxDelayMs);
    this.heartbeatMs = reconnect.heartbeatMs ?? 10_000;
    this.confirmMs = reconnect.confirmMs ?? CONNECT_TIMEOUT_MS;
    this.mismatchDelayMs = reconnect.mismatchDelayMs ?? 30_000;
    this.peers = new CachePeers(reconnect.leaseMs ?? 2000);
  }

  /**
   * Starts the listening loop and waits for its first attempt; until it listens, and always when
   * disabled, every read goes to the database. Never throws: a database that is down now is
   * retried in the background.
   */
  async start(): Promise<void> {
    if (!this.enabled || this.loop) return;
    this.stopped = false;
    const firstAttempt = new Promise<void>((resolve) => {
      this.loop = this.run(resolve);
    });
    await firstAttempt;
    if (this.listening) await this.peers.awaitPeers();
  }

  /** Stops the loop and closes the listening connection; resolves when both are done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.clear();
    await this.peers.leave();
    this.wake?.();
    await this.current?.end().catch(() => {});
    await this.loop;
    this.loop = undefined;
  }

  /**
   * Hands every payload on the channel that starts with `prefix` to `handler` (read-your-writes
   * announcements, src/db/replicas.ts); they never empty the cache.
   */
  subscribe(prefix: string, handler: (rest: string) => void): void {
    this.subscribers.push({ prefix, handler });
  }

  /**
   * Whether this instance receives the channel now: listening, and its own ping came back within
   * the lease, so every notification committed before that ping has arrived.
   */
  hearing(): boolean {
    return this.listening && this.peers.fresh();
  }

  /** True while changes are being received (the cache is in use). */
  get isListening(): boolean {
    return this.listening;
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined> {
    return this.read(this.keys, hash, () => this.credentials.findApiKeyByHash(hash));
  }

  findUser(userId: string): Promise<UserCredential | undefined> {
    return this.read(this.users, userId, () => this.credentials.findUser(userId));
  }

  /** The agent row whatever its organization; the caller checks reach. Frozen: it is shared. */
  findAgent(id: string): Promise<Readonly<A> | undefined> {
    return this.read(this.agents, id, async () => {
      const row = await this.agentLoader.findEntry(id);
      if (!row) return undefined;
      // Counted on every load (a superset of what is kept): reaching the bound drops all agents.
      const chars = JSON.stringify(row).length;
      this.agentChars += chars;
      if (this.agentChars > MAX_AGENT_CHARS) {
        this.agents.clear();
        this.agentChars = chars;
      }
      return row;
    });
  }

  /** A region of entries derived from `tables` (see CacheRegion); dropped with the cache and on their changes. */
  region<T>(tables: readonly string[]): CacheRegion<T> {
    const region = new CacheRegion<T>(this, new Set(tables));
    this.regions.push(region as CacheRegion<unknown>);
    return region;
  }

  clear(): void {
    this.drops.generation += 1;
    this.keys.clear();
    this.users.clear();
    this.agents.clear();
    this.agentChars = 0;
    for (const region of this.regions) region.clear();
  }

  /**
   * Resolves once this instance has received every announcement committed before the call
   * (notifications arrive in commit order). Writes through the API await it before they answer, so
   * the very next request on this instance sees the change; tests await it after plain SQL.
   * While not listening there is nothing to wait for: the cache is bypassed.
   */
  async sync(): Promise<void> {
    this.clear();
    const listener = this.listener;
    if (!this.listening || !listener) return this.syncPeers();
    const nonce = `sync:${randomUUID()}`;
    const received = new Promise<void>((resolve) => this.syncWaiters.set(nonce, resolve));
    let timer: NodeJS.Timeout | undefined;
    try {
      await listener('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, nonce]);
      await Promise.race([received, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    } catch {
      // The connection was lost meanwhile: the loop clears the cache and bypasses it until it is back.
    } finally {
      clearTimeout(timer);
      this.syncWaiters.delete(nonce);
    }
    await this.syncPeers();
  }

  /** Every other instance has applied the change, or no longer serves from its cache. */
  private async syncPeers(): Promise<void> {
    if (!this.enabled) return;
    const round = await this.peers.awaitPeers();
    if (round.acknowledged < round.peers) this.logger.warn(round, 'cache peers did not all acknowledge a change');
  }

  private read<T>(map: Map<string, Entry<T>>, id: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    return this.readThrough(map, id, load, this.drops);
  }

  /** CacheRegion.read. */
  readRegion<T>(region: CacheRegion<T>, id: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    return this.readThrough(region.entries, id, load, region);
  }

  private async readThrough<T>(
    map: Map<string, Entry<T>>,
    id: string,
    load: () => Promise<T | undefined>,
    /** Whose drops count (the cache's or a region's generation): an object, so a read allocates nothing. */
    dropped: { readonly generation: number },
  ): Promise<T | undefined> {
    const now = this.clock.now().getTime();
    if (this.listening && this.peers.fresh()) {
      const entry = map.get(id);
      if (entry && now - entry.at <= TTL_MS && entry.at <= now) return entry.value;
      map.delete(id);
    }
    const generation = dropped.generation;
    const value = await load();
    // Only while listening, and only if nothing was dropped while the row was being read.
    if (value !== undefined && this.listening && generation === dropped.generation) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(id, { value, at: now });
    }
    return value;
  }

  /** The one reconnect loop. `attempted` is called after the first attempt, whatever its outcome. */
  private async run(attempted: () => void): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const client = this.newClient();
      this.current = client;
      let lose!: (reason: unknown) => void;
      const closed = new Promise<unknown>((resolve) => {
        lose = resolve;
        client.once('end', () => resolve(undefined));
        client.on('error', (error) => resolve(error));
      });
      let heartbeat: NodeJS.Timeout | undefined;
      let outcome: unknown;
      try {
        // pg never settles connect() when end() (a stop) comes while it is connecting; 'end' does come.
        await Promise.race([client.connect(), closed.then(() => Promise.reject(new Error('closed while connecting')))]);
        const query = oneAtATime(client);
        await query(`LISTEN ${CACHE_CHANNEL}`);
        await this.hearPool(closed);
        if (!this.stopped) {
          this.listener = query;
          this.clear();
          this.listening = true;
          this.peers.start((payload) => query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, payload]));
          if (failures > 0) this.logger.info({ attempts: failures }, 'cache listener reconnected');
          failures = 0;
        }
        attempted();
        heartbeat = this.probe(query, lose);
        if (!this.stopped) outcome = await closed;
      } catch (error) {
        attempted();
        outcome = error;
      }
      clearInterval(heartbeat);
      this.listening = false;
      this.peers.stop();
      this.listener = undefined;
      this.clear();
      // Always close the old client before anything else opens a new one (a client with a query
      // still waiting, such as an unanswered probe, is cut at once rather than waited for).
      await client.end().catch(() => {});
      this.current = undefined;
      if (this.stopped) break;
      failures += 1;
      const mismatch = outcome instanceof ListenerMismatch;
      if (failures === 1 || mismatch) {
        this.logger.warn(
          { error: outcome instanceof Error ? outcome.message : undefined },
          'cache listener lost; cache bypassed until it reconnects',
        );
      }
      const backoff = Math.min(this.minDelayMs * 2 ** (failures - 1), this.maxDelayMs);
      await this.pause(mismatch ? Math.max(backoff, this.mismatchDelayMs) : backoff);
    }
  }

  /**
   * Before the cache is used: a notification sent through the request pool must arrive on the
   * listening connection. It does not where DATABASE_LISTEN_URL reaches another database or server,
   * or where the listener goes through a pooler in transaction mode (its LISTEN stays behind on a
   * server connection it does not keep), and the cache would then miss changes, revocations
   * included; the attempt fails instead and is repeated, with the cache bypassed meanwhile.
   */
  private async hearPool(closed: Promise<unknown>): Promise<void> {
    const nonce = `pool:${randomUUID()}`;
    const heard = new Promise<string>((resolve) => this.syncWaiters.set(nonce, () => resolve('heard')));
    let timer: NodeJS.Timeout | undefined;
    let sent = false;
    try {
      // The pool's own wait for a connection does not hold up a stop() or the bound below.
      const outcome = await Promise.race([
        this.notifyThroughPool(nonce).then(() => {
          sent = true;
          return heard;
        }),
        closed.then(() => 'closed'),
        new Promise<string>((resolve) => (timer = setTimeout(resolve, this.confirmMs, 'timeout'))),
      ]);
      if (outcome === 'closed') throw new Error('the listening connection closed');
      // Not even sent in time: the pool is busy or down, an outage rather than a setting.
      if (outcome === 'timeout' && !sent)
        throw new Error(`the pool did not send a notification within ${this.confirmMs} ms`);
      if (outcome === 'timeout') {
        throw new ListenerMismatch(
          `a notification sent through DATABASE_URL did not arrive on the listening connection within ${this.confirmMs} ms: ` +
            'it must reach the same database directly or through a session-mode pool (behind a pooler in ' +
            'transaction mode, set DATABASE_LISTEN_URL to such a connection, or READ_CACHE_ENABLED=false)',
        );
      }
    } finally {
      clearTimeout(timer);
      this.syncWaiters.delete(nonce);
    }
  }

  /** Probes the connection every `heartbeatMs`; calls `lose` when a probe fails or gets no answer in time. */
  private probe(query: Query, lose: (reason: unknown) => void): NodeJS.Timeout {
    let pending = false;
    const timer = setInterval(() => {
      if (pending) return lose(new Error('cache listener heartbeat got no answer'));
      pending = true;
      query('SELECT 1').then(
        () => (pending = false),
        (error: unknown) => lose(error),
      );
    }, this.heartbeatMs);
    timer.unref();
    return timer;
  }

  private newClient(): pg.Client {
    // Named so that operators (and the outage test) can tell it apart in pg_stat_activity; an
    // application_name in the URL would otherwise win over the option.
    const url = new URL(this.listenUrl);
    const base = url.searchParams.get('application_name');
    url.searchParams.set('application_name', base ? `${base}/cache-listener` : 'vam-cache-listener');
    const client = new pg.Client({
      connectionString: url.toString(),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on('notification', ({ payload }) => {
      if (this.peers.handle(payload)) return;
      const subscriber = payload ? this.subscribers.find((s) => payload.startsWith(s.prefix)) : undefined;
      if (subscriber) return subscriber.handler(payload!.slice(subscriber.prefix.length));
      const waiter = payload ? this.syncWaiters.get(payload) : undefined;
      if (waiter) return waiter();
      // A table only regions derive from drops those regions alone.
      const regions = payload ? this.regions.filter((r) => r.tables.has(payload)) : [];
      if (regions.length > 0) for (const region of regions) region.clear();
      // Another instance's nonce announces nothing; any other payload is a change.
      else if (!payload || !NONCE.test(payload)) this.clear();
    });
    return client;
  }

  /** Waits `ms`, or less when stop() wakes it. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
