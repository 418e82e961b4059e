import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import type { Container } from '../../src/container.js';
import { DATABASE_TIMEOUT_DEFAULTS } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue } from '../../src/jobs/queue.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/**
 * PostgreSQL goes silent: it accepts TCP and answers nothing, and the connections the instance
 * holds get no answer either (a firewall dropping packets, not refusing them). For 20 s, under
 * steady requests of three kinds, every request must be answered within 6 s with 503 and
 * Retry-After (a cached read may still be answered 200 for the first moments), never 500; after
 * the network is back, the service answers normally within 5 s.
 */

const BLACKHOLE_MS = 20_000;
const ANSWER_BOUND_MS = 6000;
const RECOVERY_BOUND_MS = 5000;
/** A request still unanswered after this is recorded as such (and fails the test), not awaited for ever. */
const CLIENT_GIVE_UP_MS = 30_000;
/** Pause between two requests of one stream: a steady load, not a flood on a shared machine. */
const PACE_MS = 100;

type Kind = 'cached read' | 'uncached read' | 'write' | 'health';
type Answer = {
  kind: Kind;
  sentAt: number;
  ms: number;
  status: number | 'no answer';
  code?: string;
  retryAfter: string | null;
};

let ctx: TestContext;
let w: World;
let proxy: TcpProxy;
let db: Db;
let queue: JobQueue;
let container: Container;
let server: Server;
let base: string;
let phoneSequence = 2_000_000;
const applicationName = `vam-blackhole-${randomBytes(3).toString('hex')}`;
const queueErrors: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const direct = new URL(ctx.config.DATABASE_URL!);
  proxy = await TcpProxy.start(direct.hostname, Number(direct.port || 5432));
  const url = proxy.urlFor(ctx.config.DATABASE_URL!, applicationName);
  const logger = pino({ level: 'silent' });
  // pg-boss's errors go to this logger; they are collected to show that they are logged, not thrown.
  const queueLogger = pino(
    { level: 'warn' },
    { write: (line: string) => void queueErrors.push(JSON.parse(line).msg as string) },
  );
  const config = { ...ctx.config, DATABASE_URL: url, READ_CACHE_RECONNECT_MAX_MS: 200 };
  db = createDb(url, 10, logger);
  queue = await JobQueue.start(url, queueLogger, { background: true });
  let app;
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
  server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  proxy.restore();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await container.workers.stop();
  await container.cache.stop();
  await queue.stop();
  await db.destroy();
  await proxy.close();
  await ctx.close();
}, 60_000);

function request(kind: Kind): Promise<Response> {
  const signal = AbortSignal.timeout(CLIENT_GIVE_UP_MS);
  const headers = { 'X-API-Key': w.key, 'Content-Type': 'application/json' };
  switch (kind) {
    case 'cached read':
      return fetch(`${base}/v1/agents/${w.agentId}`, { headers, signal });
    case 'uncached read':
      return fetch(`${base}/v1/agents/${w.agentId}/calls`, { headers, signal });
    case 'health':
      return fetch(`${base}/v1/health`, { signal });
    case 'write':
      return fetch(`${base}/v1/agents/${w.agentId}/contacts`, {
        method: 'POST',
        headers,
        signal,
        body: JSON.stringify({
          phone_number: `+4930${String(++phoneSequence).padStart(7, '0')}`,
          customer_name: 'Erika',
        }),
      });
  }
}

async function timed(kind: Kind): Promise<Answer> {
  const sentAt = performance.now();
  try {
    const res = await request(kind);
    const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
    return {
      kind,
      sentAt,
      ms: performance.now() - sentAt,
      status: res.status,
      code: body?.error?.code,
      retryAfter: res.headers.get('retry-after'),
    };
  } catch {
    return { kind, sentAt, ms: performance.now() - sentAt, status: 'no answer', retryAfter: null };
  }
}

const KINDS: Kind[] = ['cached read', 'uncached read', 'write', 'health'];
const OK_STATUS: Record<Kind, number> = { 'cached read': 200, 'uncached read': 200, write: 201, health: 200 };

/** Waits until every kind of request is answered normally and the cache listens. */
async function allNormal(): Promise<void> {
  for (const kind of KINDS) {
    await expect
      .poll(async () => (await timed(kind)).status, { timeout: RECOVERY_BOUND_MS, interval: 20 })
      .toBe(OK_STATUS[kind]);
  }
  await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS }).toBe(true);
}

/** The app's server processes, as PostgreSQL sees them, that are `state` for longer than `olderThanMs`. */
async function backends(where: string, olderThanMs = 0): Promise<number> {
  const { rows } = await ctx.db.raw(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = ? AND ${where} AND now() - query_start > make_interval(secs => ?)`,
    [applicationName, olderThanMs / 1000],
  );
  return rows[0].n as number;
}

/**
 * A PATCH of the agent waits on a row lock held elsewhere, silent on its connection, for twice the
 * silence bound (with new connections held at PostgreSQL's first byte meanwhile when `greetingOnly`);
 * then the lock is released and the PATCH must be answered 200, not cut.
 */
async function patchWaitingOnALock(greetingOnly: boolean): Promise<void> {
  await expect.poll(() => container.cache.isListening, { timeout: RECOVERY_BOUND_MS }).toBe(true);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holder = ctx.db.transaction(async (trx) => {
    await trx.raw('SELECT 1 FROM agents WHERE id = ? FOR UPDATE', [w.agentId]);
    await released;
  });
  const name = `Waited for the lock ${randomBytes(3).toString('hex')}`;
  try {
    const patch = fetch(`${base}/v1/agents/${w.agentId}`, {
      method: 'PATCH',
      headers: { 'X-API-Key': w.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name }),
      signal: AbortSignal.timeout(CLIENT_GIVE_UP_MS),
    });
    const waiting = (olderThanMs: number) =>
      expect
        .poll(() => backends(`state = 'active' AND wait_event_type = 'Lock'`, olderThanMs), {
          timeout: 15_000,
          interval: 100,
        })
        .toBe(1);
    await waiting(0);
    if (greetingOnly) proxy.greetOnly();
    // Silent on its connection for twice the silence bound: the watchdog has looked and kept it.
    await waiting(2 * DATABASE_TIMEOUT_DEFAULTS.silenceMs);
    proxy.restore();
    release();
    const res = await patch;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe(name);
  } finally {
    proxy.restore();
    release();
    await holder;
  }
}

describe('the silence watchdog', () => {
  it('leaves alone a query that waits on a lock for longer than DATABASE_SILENCE_MS: it is answered 200', async () => {
    await patchWaitingOnALock(false);
  }, 30_000);

  it('leaves it alone too when its probe is greeted by PostgreSQL but not served in time (a busy machine)', async () => {
    await patchWaitingOnALock(true);
    await allNormal();
  }, 30_000);

  it('drops connections whose answers are lost while PostgreSQL still answers new ones: 503 within 6 s, then 200', async () => {
    for (const kind of KINDS) expect((await timed(kind)).status, kind).toBe(OK_STATUS[kind]);
    // Every open connection goes silent (a NAT that forgot them); new connections still work.
    proxy.freeze();
    const first = await timed('uncached read');
    expect(first.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect([200, 503]).toContain(first.status);
    const frozenAt = performance.now();
    await expect
      .poll(async () => (await timed('uncached read')).status, { timeout: RECOVERY_BOUND_MS, interval: 20 })
      .toBe(200);
    const recoveredMs = performance.now() - frozenAt;
    console.info(
      `frozen connections: first answer ${first.status} in ${Math.round(first.ms)} ms, normal again ${Math.round(recoveredMs)} ms later`,
    );
    for (const kind of KINDS) {
      const answer = await timed(kind);
      expect(answer.ms, kind).toBeLessThan(ANSWER_BOUND_MS);
      expect([OK_STATUS[kind], 503], kind).toContain(answer.status);
    }
    // The frozen sockets (the cache's listener, pg-boss's) are dropped; the next test starts clean.
    proxy.cut();
    proxy.restore();
    await allNormal();
  }, 30_000);
});

describe('a PostgreSQL that goes silent (packets dropped) for 20 s', () => {
  it(
    'answers every request within 6 s with 503 and Retry-After, never 500, and is back within 5 s',
    async () => {
      await allNormal();

      const answers: Answer[] = [];
      let running = true;
      const streams = KINDS.map(async (kind) => {
        while (running) {
          answers.push(await timed(kind));
          await delay(PACE_MS);
        }
      });

      // A steady moment before, so that the pool holds connections that the blackhole then silences.
      await expect.poll(() => answers.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
      const blackholedAt = performance.now();
      proxy.blackhole();
      await delay(BLACKHOLE_MS);
      proxy.restore();
      const restoredAt = performance.now();

      // Recovered: every kind answered normally by a request sent after the restore.
      const recoveredAfter = (kind: Kind) =>
        answers.find((a) => a.kind === kind && a.sentAt >= restoredAt && a.status === OK_STATUS[kind]);
      await expect
        .poll(() => KINDS.every((kind) => recoveredAfter(kind)), { timeout: RECOVERY_BOUND_MS * 3, interval: 20 })
        .toBe(true);
      const recoveryMs =
        Math.max(...KINDS.map((kind) => recoveredAfter(kind)!.sentAt + recoveredAfter(kind)!.ms)) - restoredAt;
      running = false;
      await Promise.all(streams);

      // Sent and answered while PostgreSQL was silent (one sent just before the restore may be answered normally).
      const during = answers.filter((a) => a.sentAt >= blackholedAt && a.sentAt + a.ms <= restoredAt);
      const maxAnswerMs = Math.max(...answers.map((a) => a.ms));
      const summary = KINDS.map((kind) => {
        const mine = during.filter((a) => a.kind === kind);
        const statuses = [...new Set(mine.map((a) => a.status))].join('/');
        return `${kind}: ${mine.length} (${statuses}), max ${Math.round(Math.max(...mine.map((a) => a.ms)))} ms`;
      });
      console.info(
        `database blackhole ${BLACKHOLE_MS} ms: ${answers.length} requests; during it ${summary.join('; ')}; ` +
          `max answer ${Math.round(maxAnswerMs)} ms; recovered ${Math.round(recoveryMs)} ms after the restore; ` +
          `${proxy.swallowedTotal} connection attempts swallowed; job queue log: ${JSON.stringify(queueErrors)}`,
      );

      expect(
        answers.filter(
          (a) => a.status === 'no answer' || (typeof a.status === 'number' && a.status >= 500 && a.status !== 503),
        ),
      ).toEqual([]);
      expect(answers.filter((a) => a.ms > ANSWER_BOUND_MS).map((a) => ({ ...a, ms: Math.round(a.ms) }))).toEqual([]);
      for (const a of during) {
        if (a.kind === 'cached read' && a.status === 200) continue;
        // The health check answers its own body (checks.database: unavailable) with 503.
        if (a.kind === 'health') {
          expect(a.status).toBe(503);
          continue;
        }
        expect({ kind: a.kind, status: a.status, code: a.code, retryAfter: a.retryAfter }).toEqual({
          kind: a.kind,
          status: 503,
          code: 'SERVICE_UNAVAILABLE',
          retryAfter: '1',
        });
      }
      // The blackhole was felt by every kind of request, and lasted.
      for (const kind of KINDS)
        expect(during.filter((a) => a.kind === kind && a.status === 503).length, kind).toBeGreaterThanOrEqual(3);
      expect(recoveryMs).toBeLessThan(RECOVERY_BOUND_MS);

      // The job queue came through it: it answers again, and its errors were logged, not thrown.
      await expect
        .poll(
          () =>
            queue.waitingStats().then(
              () => true,
              () => false,
            ),
          { timeout: RECOVERY_BOUND_MS },
        )
        .toBe(true);
    },
    BLACKHOLE_MS + 60_000,
  );
});
