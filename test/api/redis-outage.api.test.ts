import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Express } from 'express';
import { pino, type Logger } from 'pino';
import { createClient } from 'redis';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import type { Container } from '../../src/container.js';
import type { RateLimitStore } from '../../src/http/rate-limit-store.js';
import { openRateLimitStore, RedisRateLimitStore } from '../../src/http/redis-rate-limit-store.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { RedisServer, redisServerAvailable } from '../support/redis-server.js';

/**
 * Redis holds only the rate-limit counters, so losing it must not cost a request. Each test runs its
 * own redis-server on a free port (never the shared one) and stops and starts it for real; every
 * wait polls for the condition it needs.
 */

const RECOVERY_BOUND_MS = 5000;

const available = redisServerAvailable();
if (!available) process.stderr.write('redis-outage: no redis-server on the PATH: the Redis fault tests are skipped\n');

type LogLine = { level: number; msg: string; [field: string]: unknown };
/** A logger whose lines the test reads (warn = 40, info = 30). */
function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

/** The value of one unlabelled sample of a /metrics answer. */
async function sample(http: ReturnType<typeof supertest>, name: string): Promise<number | undefined> {
  const text = (await http.get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

let ctx: TestContext;
let w: World;
const redis: RedisServer[] = [];
const stores: RateLimitStore[] = [];
const containers: Container[] = [];

/** A further instance of the API on the same database, with a rate-limit store of its own. */
function instance(store: RateLimitStore): { app: Express; http: ReturnType<typeof supertest> } {
  const { app, container } = createApp({
    config: ctx.config,
    db: ctx.db,
    databaseUrl: ctx.config.DATABASE_URL!,
    logger: ctx.logger,
    clock: ctx.clock,
    rateLimitStore: store,
    verifyToken: createTokenVerifier(ctx.config),
    queue: ctx.queue,
  });
  containers.push(container);
  return { app, http: supertest(app) };
}

async function startRedis(again?: RedisServer): Promise<RedisServer> {
  if (again) {
    await again.start();
    return again;
  }
  const started = await RedisServer.start();
  redis.push(started);
  return started;
}

/** The Redis the two instances share. */
let shared: RedisServer;
const logA = capturingLogger();
const logB = capturingLogger();
let storeA: RedisRateLimitStore;
let storeB: RedisRateLimitStore;
/** The second instance (the file's own app, `ctx.http`, is the first). */
let b: ReturnType<typeof supertest>;

beforeAll(async () => {
  if (!available) return;
  shared = await startRedis();
  storeA = await RedisRateLimitStore.connect(shared.url, logA.logger);
  storeB = await RedisRateLimitStore.connect(shared.url, logB.logger);
  stores.push(storeA, storeB);
  ctx = await createTestContext({ rateLimitStore: storeA });
  w = await ctx.build.world();
  b = instance(storeB).http;
  await containers.at(-1)!.cache.start();
});

afterAll(async () => {
  for (const container of containers) await container.cache.stop();
  for (const store of stores) await store.close();
  for (const r of redis) await r.stop();
  await ctx?.close();
});

describe.skipIf(!available)('Redis stopped and started again under load (two instances sharing it)', () => {
  /** Four requests of a fresh 4-per-minute key, alternating between the instances, then a fifth. */
  async function expectOneBudget(): Promise<void> {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 4, rateLimitPerHour: 100 });
    const remaining: string[] = [];
    for (const http of [ctx.http, b, ctx.http, b]) {
      const res = await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
      remaining.push(res.headers['x-ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(429);
    await b.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(429);
  }

  it('shares one budget between the instances while Redis is up', async () => {
    expect(await sample(ctx.http, 'rate_limit_store_degraded')).toBe(0);
    await expectOneBudget();
  });

  it('keeps answering every request when Redis stops, and says so once in the log and in /metrics', async () => {
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let served = 0;
    let stop = false;
    const url = `${ctx.baseUrl}/v1/agents/${w.agentId}`;
    const client = async () => {
      while (!stop) {
        try {
          const res = await fetch(url, { headers: { 'X-API-Key': w.key } });
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          served += 1;
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const load = Promise.all(Array.from({ length: 4 }, client));

    await until(() => served >= 20, 10_000, 'load running');
    await shared.stop();
    await until(async () => (await sample(ctx.http, 'rate_limit_store_degraded')) === 1, 5000, 'A degraded');
    const atDegradation = served;
    await until(() => served >= atDegradation + 40, 10_000, 'load served on per-instance counters');
    stop = true;
    await load;

    expect(failures).toEqual([]);
    expect([...statuses.keys()]).toEqual([200]);
    expect(await sample(ctx.http, 'rate_limit_store_degradations_total')).toBe(1);
    expect(await sample(ctx.http, 'rate_limit_store_fallback_requests_total')).toBeGreaterThanOrEqual(40);
    // The idle instance found out too (its connection closed), without a request of its own.
    await until(() => storeB.health().degraded, 5000, 'B degraded');
    expect(await sample(b, 'rate_limit_store_degraded')).toBe(1);
    for (const { lines } of [logA, logB]) {
      const warnings = lines.filter((l) => l.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toMatch(/^Redis at 127\.0\.0\.1:\d+ is unreachable .*counted per instance/);
      expect(warnings[0]).not.toHaveProperty('err');
    }
  });

  it('goes back to one shared budget within 5 s of Redis starting again', async () => {
    const fallbackBefore = await sample(ctx.http, 'rate_limit_store_fallback_requests_total');
    const started = Date.now();
    await startRedis(shared);
    await until(
      async () =>
        (await sample(ctx.http, 'rate_limit_store_degraded')) === 0 &&
        (await sample(b, 'rate_limit_store_degraded')) === 0,
      RECOVERY_BOUND_MS,
      'both instances back on Redis',
    );
    await expectOneBudget();
    expect(Date.now() - started).toBeLessThan(RECOVERY_BOUND_MS + 2000);
    expect(await sample(ctx.http, 'rate_limit_store_fallback_requests_total')).toBe(fallbackBefore);
    for (const { lines } of [logA, logB]) {
      const recovered = lines.filter((l) => l.level === 30);
      expect(recovered).toHaveLength(1);
      expect(recovered[0]!.msg).toMatch(/answers again: rate limits are shared again/);
    }
  });
});

describe.skipIf(!available)('a start while Redis is down', () => {
  it('starts degraded with one warning, serves, and moves to Redis by itself when it comes up', async () => {
    const down = await RedisServer.reserve();
    redis.push(down);
    const { logger, lines } = capturingLogger();
    const started = Date.now();
    // The boot path of src/main.ts.
    const store = await openRateLimitStore({ REDIS_URL: down.url }, logger);
    stores.push(store);
    expect(Date.now() - started).toBeLessThan(3000);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(
      /^Redis at 127\.0\.0\.1:\d+ is unreachable at start \(.*ECONNREFUSED.*\): rate limits are counted per instance .*check REDIS_URL/,
    );

    const { http } = instance(store);
    await containers.at(-1)!.cache.start();
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 2, rateLimitPerHour: 100 });
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    expect(await sample(http, 'rate_limit_store_degraded')).toBe(1);
    expect(await sample(http, 'rate_limit_store_fallback_requests_total')).toBe(1);

    await startRedis(down);
    await until(async () => (await sample(http, 'rate_limit_store_degraded')) === 0, RECOVERY_BOUND_MS, 'on Redis');
    expect(lines.filter((l) => l.level === 30)).toHaveLength(1);
    // A fresh key now counts in Redis: its counters are there, and nothing more was counted in memory.
    const fresh = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 2, rateLimitPerHour: 100 });
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', fresh.key).expect(200);
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', fresh.key).expect(200);
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', fresh.key).expect(429);
    expect(await sample(http, 'rate_limit_store_fallback_requests_total')).toBe(1);
    const direct = createClient({ url: down.url });
    await direct.connect();
    try {
      expect(await direct.keys(`rl:{${fresh.id}}:m:*`)).toHaveLength(1);
    } finally {
      direct.destroy();
    }
  });
});

describe.skipIf(!available)('a Redis that stops answering with its connection open', () => {
  it('holds no request longer than the command timeout, and is used again once it answers', async () => {
    const frozen = await startRedis();
    const { logger, lines } = capturingLogger();
    const store = await RedisRateLimitStore.connect(frozen.url, logger);
    stores.push(store);
    const { http } = instance(store);
    await containers.at(-1)!.cache.start();
    const get = () => http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    await get();
    expect(store.health().fallbackRequests).toBe(0);

    frozen.pause();
    const started = Date.now();
    await Promise.all([get(), get(), get()]);
    // 500 ms of waiting for Redis, the rest is a loaded machine; without the bound these never answer.
    expect(Date.now() - started).toBeLessThan(2500);
    expect(store.health()).toEqual({ degraded: true, degradations: 1, fallbackRequests: 3 });
    await get();
    expect(store.health().fallbackRequests).toBe(4);
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      expect.stringMatching(/is unreachable \(no answer within 500 ms\)/),
    ]);

    frozen.resume();
    await until(() => !store.health().degraded, RECOVERY_BOUND_MS, 'Redis used again');
    await get();
    expect(store.health()).toEqual({ degraded: false, degradations: 1, fallbackRequests: 4 });
    expect(lines.filter((l) => l.level === 30)).toHaveLength(1);
  });
});

describe.skipIf(!available)('a process with the store open when Redis stops', () => {
  it('lives on and keeps counting (it used to exit on the unhandled error event)', async () => {
    const own = await startRedis();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../support/redis-store-child.ts', import.meta.url)), own.url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const ticks: { allowed: boolean; degraded: boolean }[] = [];
    let stderr = '';
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const part of parts) {
        const line = JSON.parse(part) as { tick?: boolean; allowed: boolean; degraded: boolean };
        if (line.tick) ticks.push(line);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const alive = () => {
      if (child.exitCode !== null) throw new Error(`the process exited with ${child.exitCode}: ${stderr}`);
      return true;
    };
    try {
      await until(() => alive() && ticks.length > 0, 15_000, 'the process counting');
      expect(ticks.every((t) => t.allowed && !t.degraded)).toBe(true);
      await own.stop();
      await until(() => alive() && ticks.some((t) => t.degraded), 5000, 'the process degraded');
      const atDegradation = ticks.length;
      await until(() => alive() && ticks.length >= atDegradation + 10, 5000, 'the process counting on');
      expect(ticks.slice(atDegradation).every((t) => t.allowed)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
