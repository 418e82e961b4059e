import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createClient } from 'redis';
import { MemoryRateLimitStore, type RateLimitStore } from '../../src/http/rate-limit-store.js';
import { RedisRateLimitStore } from '../../src/http/redis-rate-limit-store.js';

const stores: [string, () => Promise<RateLimitStore>][] = [['memory', async () => new MemoryRateLimitStore()]];
// CI sets REDIS_URL (the machine runs Redis); a machine without Redis runs the memory contract only.
if (process.env.REDIS_URL)
  stores.push(['redis', () => RedisRateLimitStore.connect(process.env.REDIS_URL!, pino({ level: 'silent' }))]);

describe.each(stores)('%s rate-limit store', (_name, make) => {
  const opened: RateLimitStore[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });
  const open = async () => {
    const s = await make();
    opened.push(s);
    return s;
  };

  it('counts both windows together and refuses without counting', async () => {
    const store = await open();
    const key = randomUUID();
    const t0 = new Date('2030-01-01T10:00:00Z');
    const limits = { perMinute: 2, perHour: 3 };
    expect((await store.consume(key, limits, t0)).minuteCount).toBe(1);
    expect((await store.consume(key, limits, t0)).minuteCount).toBe(2);
    expect(await store.consume(key, limits, t0)).toMatchObject({
      allowed: false,
      rejectedBy: 'minute',
      minuteCount: 2,
    });
    const t1 = new Date('2030-01-01T10:01:00Z');
    expect(await store.consume(key, limits, t1)).toMatchObject({ allowed: true, minuteCount: 1 });
    expect(await store.consume(key, limits, t1)).toMatchObject({ allowed: false, rejectedBy: 'hour', minuteCount: 1 });
    const t2 = new Date('2030-01-01T11:00:00Z');
    expect(await store.consume(key, limits, t2)).toMatchObject({ allowed: true, minuteCount: 1 });
  });

  it('is atomic under concurrency: exactly the limit is allowed', async () => {
    const store = await open();
    const key = randomUUID();
    const at = new Date('2030-01-01T12:00:00Z');
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.consume(key, { perMinute: 10, perHour: 1000 }, at)),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
  });

  it('resets the minute window on the minute boundary', async () => {
    const store = await open();
    const d = await store.consume(randomUUID(), { perMinute: 1, perHour: 1 }, new Date('2030-01-01T12:00:42Z'));
    expect(d.minuteResetAt.toISOString()).toBe('2030-01-01T12:01:00.000Z');
    expect(d.hourResetAt.toISOString()).toBe('2030-01-01T13:00:00.000Z');
  });
});

describe.runIf(process.env.REDIS_URL)('redis rate-limit store script', () => {
  it('sends its script again when Redis has forgotten it (SCRIPT FLUSH) and keeps counting', async () => {
    const store = await RedisRateLimitStore.connect(process.env.REDIS_URL!, pino({ level: 'silent' }));
    const admin = createClient({ url: process.env.REDIS_URL! });
    await admin.connect();
    try {
      const key = randomUUID();
      const at = new Date('2030-01-01T13:00:00Z');
      const limits = { perMinute: 5, perHour: 100 };
      expect((await store.consume(key, limits, at)).minuteCount).toBe(1);
      await admin.scriptFlush();
      expect(await store.consume(key, limits, at)).toMatchObject({ allowed: true, minuteCount: 2 });
      expect(store.health()).toMatchObject({ degraded: false, fallbackRequests: 0 });
    } finally {
      await admin.close();
      await store.close();
    }
  });
});
