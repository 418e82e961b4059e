import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { ApiKeyCredential, CredentialsRepository, UserCredential } from '../auth/credentials.repository.js';
import type { Clock } from '../clock.js';
import type { AgentRow } from '../modules/agents/agent.repository.js';
import { CachePeers } from './cache-peers.js';

export const CACHE_CHANNEL = 'vam_cache';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

type Entry<T> = { value: T; at: number };
type AgentLoader = { findAnyById(id: string): Promise<AgentRow | undefined> };

/**
 * Rows read on nearly every request (a key with its creator's memberships, a user's memberships, an
 * agent) kept in memory, so that authentication and the agent check cost no database round trip.
 *
 * Safe because every change to those rows is announced by a trigger on `vam_cache` at commit, and
 * each instance drops its whole cache on any announcement. While the listening connection is down
 * the cache is bypassed (and emptied when it comes back), so a missed announcement can never leave a
 * revoked key usable. A read that was already under way when the cache was dropped does not store
 * its result (generation check), so it cannot put back a row from before the change.
 */
export class ReadCache {
  private readonly keys = new Map<string, Entry<ApiKeyCredential>>();
  private readonly users = new Map<string, Entry<UserCredential>>();
  private readonly agents = new Map<string, Entry<AgentRow>>();
  private generation = 0;
  private listener: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private readonly syncWaiters = new Map<string, () => void>();
  /** Other instances' acknowledgements of changes, and this instance's lease on its cache. */
  readonly peers: CachePeers;

  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly agentLoader: AgentLoader,
    private readonly databaseUrl: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly enabled = true,
    leaseMs = 2000,
  ) {
    this.peers = new CachePeers(leaseMs);
  }

  /** Starts listening; until then, and always when disabled, every read goes to the database. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    this.stopped = false;
    await this.connect();
    if (this.listening) await this.peers.awaitPeers();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.peers.stop();
    this.listening = false;
    this.clear();
    await this.listener?.end().catch(() => {});
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined> {
    return this.read(this.keys, hash, () => this.credentials.findApiKeyByHash(hash));
  }

  findUser(userId: string): Promise<UserCredential | undefined> {
    return this.read(this.users, userId, () => this.credentials.findUser(userId));
  }

  /** The agent row whatever its organization; the caller checks reach. Frozen: it is shared. */
  findAgent(id: string): Promise<AgentRow | undefined> {
    return this.read(this.agents, id, async () => {
      const row = await this.agentLoader.findAnyById(id);
      return row ? Object.freeze(row) : undefined;
    });
  }

  touchApiKey(id: string, at: Date): Promise<void> {
    return this.credentials.touchApiKey(id, at);
  }

  clear(): void {
    this.generation += 1;
    this.keys.clear();
    this.users.clear();
    this.agents.clear();
  }

  /**
   * Resolves once this instance has received every announcement committed before the call
   * (notifications arrive in commit order). Writes through the API await it before they answer, so
   * the very next request on this instance sees the change; tests await it after plain SQL.
   */
  async sync(): Promise<void> {
    this.clear();
    if (!this.listening || !this.listener) return this.syncPeers();
    const nonce = `sync:${randomUUID()}`;
    const received = new Promise<void>((resolve) => this.syncWaiters.set(nonce, resolve));
    await this.listener.query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, nonce]);
    await Promise.race([received, new Promise((r) => setTimeout(r, 2000))]);
    this.syncWaiters.delete(nonce);
    await this.syncPeers();
  }

  /** Every other instance has applied the change, or no longer serves from its cache. */
  private async syncPeers(): Promise<void> {
    if (!this.enabled) return;
    const round = await this.peers.awaitPeers();
    if (round.acknowledged < round.peers) this.logger.warn(round, 'cache peers did not all acknowledge a change');
  }

  private async read<T>(
    map: Map<string, Entry<T>>,
    id: string,
    load: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const now = this.clock.now().getTime();
    if (this.listening && this.peers.fresh()) {
      const entry = map.get(id);
      if (entry && now - entry.at <= TTL_MS && entry.at <= now) return entry.value;
      map.delete(id);
    }
    const generation = this.generation;
    const value = await load();
    // Only while listening, and only if nothing was dropped while the row was being read.
    if (value !== undefined && this.listening && generation === this.generation) {
      if (map.size >= MAX_ENTRIES) map.clear();
      map.set(id, { value, at: now });
    }
    return value;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'vam-cache-listener' });
    client.on('notification', (message) => {
      if (this.peers.handle(message.payload)) return;
      const waiter = message.payload ? this.syncWaiters.get(message.payload) : undefined;
      if (waiter) waiter();
      else this.clear();
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CACHE_CHANNEL}`);
      this.listener = client;
      this.clear();
      this.listening = true;
      this.peers.start((payload) => client.query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, payload]));
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.listener && this.listener !== client) return;
    this.listening = false;
    this.listener = undefined;
    this.peers.stop();
    this.clear();
    if (this.stopped) return;
    this.logger.warn(
      { error: error instanceof Error ? error.message : undefined },
      'cache listener lost; cache bypassed until it reconnects',
    );
    client.end().catch(() => {});
    setTimeout(() => void this.connect(), 1000).unref();
  }
}
