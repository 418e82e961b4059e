import type { createClient } from 'redis';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- redis's own spelling of 'no modules, functions or scripts'
type RedisClient = ReturnType<typeof createClient<{}, {}, {}, 3>>;

export type RateLimits = { perMinute: number; perHour: number };

export type RateDecision = {
  allowed: boolean;
  rejectedBy: 'minute' | 'hour' | null;
  /** Requests counted in the current minute window (after this one, when allowed). */
  minuteCount: number;
  minuteResetAt: Date;
  hourResetAt: Date;
};

/**
 * Checks both windows and counts the request in one atomic step: a request refused by either
 * window consumes nothing in the other. Windows are fixed and aligned to the clock.
 */
export interface RateLimitStore {
  consume(keyId: string, limits: RateLimits, now: Date): Promise<RateDecision>;
  close(): Promise<void>;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

export function windowStart(now: Date, size: number): number {
  return Math.floor(now.getTime() / size) * size;
}

export function minuteResetAt(now: Date): Date {
  return new Date(windowStart(now, MINUTE) + MINUTE);
}

function decision(
  allowed: boolean,
  rejectedBy: RateDecision['rejectedBy'],
  minuteCount: number,
  now: Date,
): RateDecision {
  return {
    allowed,
    rejectedBy,
    minuteCount,
    minuteResetAt: minuteResetAt(now),
    hourResetAt: new Date(windowStart(now, HOUR) + HOUR),
  };
}

/** One instance: counters in process memory (synchronous, hence atomic). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<
    string,
    { minute: number; minuteCount: number; hour: number; hourCount: number }
  >();

  async consume(keyId: string, limits: RateLimits, now: Date): Promise<RateDecision> {
    const minute = windowStart(now, MINUTE);
    const hour = windowStart(now, HOUR);
    let c = this.counters.get(keyId);
    if (!c) {
      if (this.counters.size > 100_000) this.prune(hour);
      c = { minute, minuteCount: 0, hour, hourCount: 0 };
      this.counters.set(keyId, c);
    }
    if (c.minute !== minute) Object.assign(c, { minute, minuteCount: 0 });
    if (c.hour !== hour) Object.assign(c, { hour, hourCount: 0 });
    if (c.minuteCount >= limits.perMinute) return decision(false, 'minute', c.minuteCount, now);
    if (c.hourCount >= limits.perHour) return decision(false, 'hour', c.minuteCount, now);
    c.minuteCount += 1;
    c.hourCount += 1;
    return decision(true, null, c.minuteCount, now);
  }

  private prune(currentHour: number): void {
    for (const [key, c] of this.counters) if (c.hour !== currentHour) this.counters.delete(key);
  }

  async close(): Promise<void> {}
}

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

/** Several instances: counters shared in Redis. */
export class RedisRateLimitStore implements RateLimitStore {
  private constructor(private readonly client: RedisClient) {}

  /** Loads the Redis client only here: an instance without `REDIS_URL` keeps its 5 MB of heap free. */
  static async connect(url: string): Promise<RedisRateLimitStore> {
    const { createClient } = await import('redis');
    const client: RedisClient = createClient({ url });
    await client.connect();
    return new RedisRateLimitStore(client);
  }

  async consume(keyId: string, limits: RateLimits, now: Date): Promise<RateDecision> {
    // `{keyId}` is a Redis Cluster hash tag: both counters of a key live in one slot, as the script needs.
    const keys = [`rl:{${keyId}}:m:${windowStart(now, MINUTE)}`, `rl:{${keyId}}:h:${windowStart(now, HOUR)}`];
    const [allowed, minuteCount, rejected] = (await this.client.eval(CONSUME_SCRIPT, {
      keys,
      arguments: [String(limits.perMinute), String(limits.perHour)],
    })) as [number, number, number];
    return decision(allowed === 1, rejected === 1 ? 'minute' : rejected === 2 ? 'hour' : null, minuteCount, now);
  }

  async close(): Promise<void> {
    await this.client.quit();
  }
}
