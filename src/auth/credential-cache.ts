import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ApiKeyCredential, CredentialsRepository, UserCredential } from './credentials.repository.js';

export const CREDENTIALS_CHANNEL = 'vam_credentials';
const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

type Entry<T> = { value: T; at: number };

/**
 * Credentials (a key's row with its creator's memberships, a user's memberships) kept in memory so
 * that authentication costs no database round trip. Safe because every change to those rows is
 * announced by a trigger on `vam_credentials` at commit, and each instance drops its whole cache on
 * any announcement. While the listening connection is down the cache is bypassed (and emptied when
 * it comes back), so a missed announcement can never leave a revoked key usable.
 */
export class CredentialCache {
  private readonly keys = new Map<string, Entry<ApiKeyCredential>>();
  private readonly users = new Map<string, Entry<UserCredential>>();
  private listener: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private readonly syncWaiters = new Map<string, () => void>();

  constructor(
    private readonly repository: CredentialsRepository,
    private readonly databaseUrl: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.clear();
    await this.listener?.end().catch(() => {});
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined> {
    const cached = this.fresh(this.keys, hash);
    if (cached) return cached;
    const value = await this.repository.findApiKeyByHash(hash);
    if (value) this.remember(this.keys, hash, value);
    return value;
  }

  async findUser(userId: string): Promise<UserCredential | undefined> {
    const cached = this.fresh(this.users, userId);
    if (cached) return cached;
    const value = await this.repository.findUser(userId);
    if (value) this.remember(this.users, userId, value);
    return value;
  }

  touchApiKey(id: string, at: Date): Promise<void> {
    return this.repository.touchApiKey(id, at);
  }

  clear(): void {
    this.keys.clear();
    this.users.clear();
  }

  /**
   * Resolves once this instance has received every announcement committed before the call
   * (notifications arrive in commit order). Key changes made through the API await it before they
   * answer, and tests await it after changing credentials with plain SQL.
   */
  async sync(): Promise<void> {
    this.clear();
    if (!this.listening || !this.listener) return;
    const nonce = `sync:${randomUUID()}`;
    const received = new Promise<void>((resolve) => this.syncWaiters.set(nonce, resolve));
    await this.listener.query('SELECT pg_notify($1, $2)', [CREDENTIALS_CHANNEL, nonce]);
    await Promise.race([received, new Promise((r) => setTimeout(r, 2000))]);
    this.syncWaiters.delete(nonce);
  }

  private fresh<T>(map: Map<string, Entry<T>>, id: string): T | undefined {
    if (!this.listening) return undefined;
    const entry = map.get(id);
    if (!entry) return undefined;
    if (this.clock.now().getTime() - entry.at > TTL_MS || entry.at > this.clock.now().getTime()) {
      map.delete(id);
      return undefined;
    }
    return entry.value;
  }

  private remember<T>(map: Map<string, Entry<T>>, id: string, value: T): void {
    if (!this.listening) return;
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(id, { value, at: this.clock.now().getTime() });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'vam-credential-listener' });
    client.on('notification', (message) => {
      const waiter = message.payload ? this.syncWaiters.get(message.payload) : undefined;
      if (waiter) waiter();
      else this.clear();
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
      this.listener = client;
      this.clear();
      this.listening = true;
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.listener && this.listener !== client) return;
    this.listening = false;
    this.listener = undefined;
    this.clear();
    if (this.stopped) return;
    this.logger.warn({ error: error instanceof Error ? error.message : undefined }, 'credential listener lost; cache bypassed until it reconnects');
    client.end().catch(() => {});
    setTimeout(() => void this.connect(), 1000).unref();
  }
}
