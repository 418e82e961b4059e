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
  /** A store with a backend that can be lost (Redis) says how it fares; /metrics shows it. */
  health?(): RateLimitStoreHealth;
}

export type RateLimitStoreHealth = {
  /** True while the shared counters are unreachable and this instance counts alone. */
  degraded: boolean;
  /** Times the store went from shared to per-instance counters. */
  degradations: number;
  /** Requests counted per instance because the shared counters were unreachable. */
  fallbackRequests: number;
};

const MINUTE = 60_000;
const HOUR = 3_600_000;

export function windowStart(now: Date, size: number): number {
  return Math.floor(now.getTime() / size) * size;
}

/** The two shared counters of a key. `{keyId}` is a Redis Cluster hash tag: both live in one slot, as the script needs. */
export function rateLimitKeys(keyId: string, now: Date): [string, string] {
  return [`rl:{${keyId}}:m:${windowStart(now, MINUTE)}`, `rl:{${keyId}}:h:${windowStart(now, HOUR)}`];
}

export function minuteResetAt(now: Date): Date {
  return new Date(windowStart(now, MINUTE) + MINUTE);
}

export function decision(
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
