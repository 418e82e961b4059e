import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { createClient } from 'redis';
import type { Config } from '../config.js';
import {
  decision,
  MemoryRateLimitStore,
  rateLimitKeys,
  type RateDecision,
  type RateLimits,
  type RateLimitStore,
  type RateLimitStoreHealth,
} from './rate-limit-store.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- redis's own spelling of 'no modules, functions or scripts'
type RedisClient = ReturnType<typeof createClient<{}, {}, {}, 3>>;

// Both windows checked, then both counted, inside one script: Redis runs it atomically.
const CONSUME_SCRIPT = `
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local h = tonumber(redis.call('GET', KEYS[2]) or '0')
if m >= tonumber(ARGV[1]) then return {0, m, 1} end
if h >= tonumber(ARGV[2]) then return {0, m, 2} end
m = redis.call('INCR', KEYS[1])
if m == 1 then redis.call('PEXPIRE', KEYS[1], 120000) end
h = redis.call('INCR', KEYS[2])
if h == 1 then redis.call('PEXPIRE', KEYS[2], 7260000) end
return {1, m, 0}`;
// Sent by its digest (EVALSHA): the body goes over the wire only when Redis does not know it yet
// (first use, or after a restart or SCRIPT FLUSH emptied its script cache).
const CONSUME_SHA = createHash('sha1').update(CONSUME_SCRIPT).digest('hex');

export type RedisStoreTimings = {
  /** Longest a request waits for Redis before it is counted in memory instead. */
  commandTimeoutMs: number;
  /** Reconnect attempts start at 100 ms and double up to this. */
  reconnectMaxMs: number;
  /** While degraded with the connection still open (a Redis that stopped answering): how often to PING. */
  probeIntervalMs: number;
  /** The longest a start waits for Redis's first answer before it goes on degraded. */
  connectTimeoutMs: number;
};

export const DEFAULT_REDIS_STORE_TIMINGS: RedisStoreTimings = {
  commandTimeoutMs: 500,
  reconnectMaxMs: 1000,
  probeIntervalMs: 1000,
  connectTimeoutMs: 1000,
};

/** host:port of a Redis URL, without user or password (for the log). */
function redisAddress(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/**
 * Several instances: counters shared in Redis. Redis holds nothing but these counters, so losing it
 * must not cost a request: while it is unreachable (refused, closed, or not answering within
 * `commandTimeoutMs`) every request is counted in this instance's memory instead, the client
 * reconnects with backoff, and the shared counters take over again as soon as Redis answers. One
 * warning when that starts, one info line when it ends; `health()` feeds /metrics.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly fallback = new MemoryRateLimitStore();
  private degraded = false;
  private degradations = 0;
  private fallbackRequests = 0;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  /** Until the first answer at start: the start itself reports what it found, in one line. */
  private starting = true;
  /** Counts recoveries: a request sent before the last one that fails late does not degrade again. */
  private generation = 0;

  private constructor(
    private readonly client: RedisClient,
    private readonly address: string,
    private readonly logger: Logger,
    private readonly timings: RedisStoreTimings,
  ) {}

  /**
   * Opens the client and waits for Redis's first answer (at most `connectTimeoutMs`). A Redis that
   * refuses or does not answer gives a store that starts degraded, with a warning: never a failed start.
   * The Redis client is loaded only here: an instance without `REDIS_URL` keeps the client's heap free.
   */
  static async connect(
    url: string,
    logger: Logger,
    timings: Partial<RedisStoreTimings> = {},
  ): Promise<RedisRateLimitStore> {
    const t = { ...DEFAULT_REDIS_STORE_TIMINGS, ...timings };
    const { createClient } = await import('redis');
    const client: RedisClient = createClient({
      url,
      // A command sent while disconnected fails at once (and is counted in memory), never waits in a queue.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: t.connectTimeoutMs,
        reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, t.reconnectMaxMs),
      },
    });
    const store = new RedisRateLimitStore(client, redisAddress(url), logger, t);
    const firstAnswer = new Promise<unknown>((resolve) => {
      client.once('ready', () => resolve(undefined));
      client.once('error', resolve);
    });
    // Without this listener an 'error' event (Redis stopped, refused) is thrown and ends the process.
    client.on('error', (error: unknown) => store.lost(error));
    client.on('ready', () => store.recovered());
    // connect() settles only once Redis is ready (it retries forever); failures arrive as 'error' events.
    client.connect().catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const noAnswer = new Promise<unknown>((resolve) => {
      timer = setTimeout(() => resolve(new Error(`no answer within ${t.connectTimeoutMs} ms`)), t.connectTimeoutMs);
    });
    const first = await Promise.race([firstAnswer, noAnswer]);
    clearTimeout(timer);
    store.starting = false;
    if (!client.isReady) store.degrade(first, 'start');
    return store;
  }

  async consume(keyId: string, limits: RateLimits, now: Date): Promise<RateDecision> {
    if (!this.degraded) {
      const generation = this.generation;
      try {
        return await this.consumeShared(keyId, limits, now);
      } catch (error) {
        if (generation === this.generation) this.degrade(error, 'request');
      }
    }
    this.fallbackRequests += 1;
    return this.fallback.consume(keyId, limits, now);
  }

  health(): RateLimitStoreHealth {
    return { degraded: this.degraded, degradations: this.degradations, fallbackRequests: this.fallbackRequests };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopProbe();
    if (!this.client.isReady) {
      this.client.destroy();
      return;
    }
    // QUIT waits for commands in flight; a Redis that stopped answering gets the socket cut after a second.
    const cut = setTimeout(() => this.client.destroy(), 1000);
    await this.client.close().catch(() => {});
    clearTimeout(cut);
  }

  private async consumeShared(keyId: string, limits: RateLimits, now: Date): Promise<RateDecision> {
    const options = {
      keys: rateLimitKeys(keyId, now),
      arguments: [String(limits.perMinute), String(limits.perHour)],
    };
    const [allowed, minuteCount, rejected] = (await this.answerWithin(
      this.client.evalSha(CONSUME_SHA, options).catch((error: unknown) => {
        if (error instanceof Error && error.message.startsWith('NOSCRIPT'))
          return this.client.eval(CONSUME_SCRIPT, options);
        throw error;
      }),
    )) as [number, number, number];
    return decision(allowed === 1, rejected === 1 ? 'minute' : rejected === 2 ? 'hour' : null, minuteCount, now);
  }

  /**
   * The client's own command timeout stops counting once a command is written to the socket, so a
   * Redis that keeps the connection open but does not answer would hold the request: bounded here.
   */
  private answerWithin<T>(command: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.timings.commandTimeoutMs} ms`)),
        this.timings.commandTimeoutMs,
      );
    });
    return Promise.race([command, timeout]).finally(() => clearTimeout(timer));
  }

  private lost(error: unknown): void {
    if (!this.starting) this.degrade(error, 'connection');
  }

  private degrade(error: unknown, when: 'start' | 'connection' | 'request'): void {
    if (this.closed || this.degraded) return;
    this.degraded = true;
    this.degradations += 1;
    const fields = { redis: this.address, cause: reason(error) };
    if (when === 'start') {
      this.logger.warn(
        fields,
        `Redis at ${this.address} is unreachable at start (${fields.cause}): rate limits are counted per instance ` +
          'until it answers; check REDIS_URL and that Redis is running',
      );
    } else {
      this.logger.warn(
        fields,
        `Redis at ${this.address} is unreachable (${fields.cause}): rate limits are counted per instance until it is back`,
      );
    }
    this.logger.debug({ err: error }, 'rate-limit store: Redis error');
    this.startProbe();
  }

  private recovered(): void {
    if (this.closed || !this.degraded) return;
    this.degraded = false;
    this.generation += 1;
    this.stopProbe();
    this.logger.info({ redis: this.address }, `Redis at ${this.address} answers again: rate limits are shared again`);
  }

  /**
   * A reconnect announces itself ('ready'); a Redis that keeps the connection open but stopped
   * answering does not, so while degraded a PING now and then finds out when it answers again.
   */
  private startProbe(): void {
    if (this.probe) return;
    this.probe = setInterval(() => {
      if (!this.client.isReady) return;
      this.answerWithin(this.client.ping()).then(
        () => this.recovered(),
        () => {},
      );
    }, this.timings.probeIntervalMs);
    this.probe.unref();
  }

  private stopProbe(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }
}

/** The store main.ts starts with: Redis when `REDIS_URL` is set (possibly degraded), memory otherwise. */
export async function openRateLimitStore(
  config: Pick<Config, 'REDIS_URL'>,
  logger: Logger,
  timings: Partial<RedisStoreTimings> = {},
): Promise<RateLimitStore> {
  return config.REDIS_URL ? RedisRateLimitStore.connect(config.REDIS_URL, logger, timings) : new MemoryRateLimitStore();
}
