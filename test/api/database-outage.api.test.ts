import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Express } from 'express';
import { pino } from 'pino';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import type { CredentialsRepository } from '../../src/auth/credentials.repository.js';
import { poolNotify, ReadCache } from '../../src/cache/read-cache.js';
import type { Container } from '../../src/container.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue } from '../../src/jobs/queue.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { checkedHttp } from '../support/contract.js';

/**
 * The app behind a TCP proxy to the real PostgreSQL: the proxy is cut (every connection dropped,
 * new ones refused) and restored, for outages of different lengths. Lengths are counted in refused
 * connection attempts, so the test waits for the outage to have happened, never for a fixed time.
 */

const POOL_MAX = 4;
/** pg-boss's pool (4), the cache's one listening connection and the pipelined key lookups' one. */
const FIXED_EXTRA = 4 + 1 + 1;
const RECOVERY_BOUND_MS = 5000;

let ctx: TestContext;
let w: World;
let proxy: TcpProxy;
let db: Db;
let queue: JobQueue;
let container: Container;
let http: ReturnType<typeof supertest>;
const applicationName = `vam-outage-${randomBytes(3).toString('hex')}`;
let phoneSequence = 1_000_000;
const recoveries: { refusedAttempts: number; recoveredMs: number }[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const direct = new URL(ctx.config.DATABASE_URL!);
  proxy = await TcpProxy.start(direct.hostname, Number(direct.port || 5432));
  const url = proxy.urlFor(ctx.config.DATABASE_URL!, applicationName);
  const logger = pino({ level: 'silent' });
  const config = { ...ctx.config, DATABASE_URL: url, READ_CACHE_RECONNECT_MAX_MS: 200 };
  db = createDb(url, POOL_MAX, logger);
  // Background mode: pg-boss supervises and polls through the outage too, and must not crash.
  queue = await JobQueue.start(url, logger, { background: true });
  let app: Express;
  ({ app, container } = createApp({
    config,
    db,
    databaseUrl: url,
    logger,
    clock: ctx.clock,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(config),
    queue,
  }));
  await container.cache.start();
  await container.workers.start();
  http = checkedHttp(app, ctx.contract);
});

afterAll(async () => {
  proxy.restore();
  await container.workers.stop();
  await container.cache.stop();
  await queue.stop();
  await db.destroy();
  await proxy.close();
  await ctx.close();
});

/** Connections this instance holds, as PostgreSQL itself sees them. */
async function heldConnections(): Promise<number> {
  const { rows } = await ctx.db.raw(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name IN (?, ?)`,
    [applicationName, `${applicationName}/cache-listener`],
  );
  return rows[0].n as number;
}

const calls = () => `/v1/agents/${w.agentId}/calls`;
const listCalls = () => http.get(calls()).set('X-API-Key', w.key);

/** Requests of several kinds that all need the database: reads, writes, the token path. */
function databaseRequests() {
  return [
    listCalls(),
    http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key),
    http.get(`/v1/agents/${w.agentId}/contacts?search=erika`).set('X-API-Key', w.key),
    http
      .post(`/v1/agents/${w.agentId}/contacts`)
      .set('X-API-Key', w.key)
      .send({ phone_number: `+4930${String(++phoneSequence).padStart(7, '0')}`, customer_name: 'Erika' }),
    http.patch(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).send({ name: 'During outage' }),
    // The call intake: a prepared read over the pipelined connections, then one prepared statement.
    http
      .post(calls())
      .set('X-API-Key', w.key)
      .send({ call_id: `outage-${++phoneSequence}`, duration: 5 }),
    http.get('/v1/api-keys').set('Authorization', `Bearer ${w.token}`),
    http.get('/v1/me').set('Authorization', `Bearer ${w.token}`),
  ];
}

async function outage(refusedAttempts: number): Promise<void> {
  await listCalls().expect(200);
  await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS }).toBe(true);
  proxy.resetPeak();

  proxy.cut();
  const refusedBefore = proxy.refused;
  // The first request after the cut may still find a connection that has not noticed yet.
  await expect.poll(async () => (await listCalls()).status, { timeout: RECOVERY_BOUND_MS, interval: 10 }).toBe(503);
  // Once the listener has noticed too, nothing may be answered from memory any more.
  await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS, interval: 5 }).toBe(false);
  for (const [i, res] of (await Promise.all(databaseRequests())).entries()) {
    expect(res.status, `request ${i}`).toBe(503);
    expect(res.body).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The service is temporarily unavailable',
        request_id: res.headers['x-request-id'],
      },
    });
    expect(res.headers['retry-after']).toBe('1');
  }
  const health = await http.get('/v1/health').expect(503);
  expect(health.body.checks).toEqual({ database: 'unavailable' });

  // Let the outage last: the listener, the pool and pg-boss keep trying and being refused.
  await expect
    .poll(() => proxy.refused - refusedBefore, { timeout: 30_000, interval: 10 })
    .toBeGreaterThanOrEqual(refusedAttempts);
  // The proxy dropped every connection; a server process leaves pg_stat_activity once it has seen
  // that, which on a busy machine (or mid-statement) is not at once.
  await expect.poll(heldConnections, { timeout: RECOVERY_BOUND_MS, interval: 20 }).toBe(0);
  expect(proxy.peakUpstream).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);

  proxy.restore();
  const restoredAt = performance.now();
  await expect.poll(async () => (await listCalls()).status, { timeout: RECOVERY_BOUND_MS, interval: 20 }).toBe(200);
  await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS, interval: 20 }).toBe(true);
  const recoveredMs = Math.round(performance.now() - restoredAt);
  recoveries.push({ refusedAttempts, recoveredMs });
  expect(recoveredMs).toBeLessThan(RECOVERY_BOUND_MS);

  for (const [i, res] of (await Promise.all(databaseRequests())).entries()) {
    expect(res.status, `request ${i}`).toBeLessThan(300);
  }
  const held = await heldConnections();
  expect(held).toBeGreaterThan(0);
  expect(held).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);
  expect(proxy.peakUpstream).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);
}

describe('a PostgreSQL outage', () => {
  it('holds at most the pool plus the fixed extra connections before any outage', async () => {
    await Promise.all(Array.from({ length: 20 }, () => listCalls().expect(200)));
    expect(await heldConnections()).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);
    expect(proxy.peakUpstream).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);
  });

  it.each([1, 8, 25, 60])(
    'answers 503 with the envelope during a cut of %i refused attempts, then recovers by itself',
    async (refusedAttempts) => {
      await outage(refusedAttempts);
    },
    60_000,
  );

  it('survives PostgreSQL terminating every connection (as on a restart): no 500, back within 5 s', async () => {
    await listCalls().expect(200);
    proxy.resetPeak();
    await ctx.db.raw(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name IN (?, ?)`, [
      applicationName,
      `${applicationName}/cache-listener`,
    ]);
    const terminatedAt = performance.now();
    const statuses = (await Promise.all(databaseRequests())).map((r) => r.status);
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    await expect.poll(async () => (await listCalls()).status, { timeout: RECOVERY_BOUND_MS, interval: 20 }).toBe(200);
    await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS, interval: 20 }).toBe(true);
    expect(performance.now() - terminatedAt).toBeLessThan(RECOVERY_BOUND_MS);
    expect(proxy.peakUpstream).toBeLessThanOrEqual(POOL_MAX + FIXED_EXTRA);
  });

  it('holds exactly one listening connection after repeated cuts', async () => {
    await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS }).toBe(true);
    const { rows } = await ctx.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ?`, [
      `${applicationName}/cache-listener`,
    ]);
    expect(rows[0].n).toBe(1);
    // Measured recovery times, for the failure-behaviour documentation.
    console.info(`database outage recoveries: ${JSON.stringify(recoveries)}`);
  });

  it('replaces a listening connection that went silent, found by its heartbeat', async () => {
    const cache = new ReadCache(
      {} as CredentialsRepository,
      { findEntry: async () => undefined },
      proxy.urlFor(ctx.config.DATABASE_URL!, `${applicationName}-silent`),
      poolNotify(ctx.db),
      ctx.clock,
      pino({ level: 'silent' }),
      true,
      { maxDelayMs: 50, heartbeatMs: 100 },
    );
    try {
      await cache.start();
      expect(cache.isListening).toBe(true);
      proxy.freeze();
      await expect.poll(() => cache.isListening, { timeout: RECOVERY_BOUND_MS, interval: 5 }).toBe(false);
      await expect.poll(() => cache.isListening, { timeout: RECOVERY_BOUND_MS, interval: 5 }).toBe(true);
      const { rows } = await ctx.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ?`, [
        `${applicationName}-silent/cache-listener`,
      ]);
      // The silent one may linger on the server until its TCP timeout; this instance holds one.
      expect(rows[0].n).toBeGreaterThanOrEqual(1);
    } finally {
      await cache.stop();
      // Frozen connections of the app's pool are dropped so that later tests start clean.
      proxy.cut();
      proxy.restore();
    }
  });
});
