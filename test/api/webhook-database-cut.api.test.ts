import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import type { Container } from '../../src/container.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue, SUPERVISE_INTERVAL_SECONDS } from '../../src/jobs/queue.js';
import { WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/**
 * A webhook send interrupted by a database cut: the app runs its workers behind a TCP proxy to the
 * real PostgreSQL, and the receiver cuts the proxy while it holds the request. The attempt must be
 * recorded once the database is back (one attempt in the log, one request at the receiver, the job
 * completed), not failed and sent again minutes later.
 */

let ctx: TestContext;
let w: World;
let proxy: TcpProxy;
let db: Db;
let queue: JobQueue;
let container: Container;
let receiver: http.Server;
let receiverUrl: string;
/** Paths the receiver got, in order. */
const received: string[] = [];
/** Called with each request before it is answered. */
let onRequest: () => void = () => {};

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const direct = new URL(ctx.config.DATABASE_URL!);
  proxy = await TcpProxy.start(direct.hostname, Number(direct.port || 5432));
  const url = proxy.urlFor(ctx.config.DATABASE_URL!, `vam-webhook-cut-${randomBytes(3).toString('hex')}`);
  const logger = pino({ level: 'silent' });
  const config = { ...ctx.config, DATABASE_URL: url, READ_CACHE_RECONNECT_MAX_MS: 200 };
  db = createDb(url, 4, logger);
  // Background mode: this instance supervises the queue (expires jobs whose worker vanished).
  queue = await JobQueue.start(url, logger, { background: true });
  ({ container } = createApp({
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

  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url ?? '');
      onRequest();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy.restore();
  await container.workers.stop();
  await container.cache.stop();
  await queue.stop();
  await db.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await ctx.close();
});

/** An agent whose post-call webhook goes to `path` at the receiver, and one call.completed event for it. */
async function eventTo(path: string): Promise<string> {
  const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: `${receiverUrl}${path}` });
  await ctx.db.transaction((trx) =>
    ctx.internals.events.record(trx, {
      organization_id: w.orgId,
      agent_id: agent.id,
      type: 'call.completed',
      payload: { call: {} },
    }),
  );
  return agent.id as string;
}

describe('a webhook send interrupted by a database cut', () => {
  it('is recorded once the database is back: one attempt, one request, its job completed', async () => {
    const path = `/cut/${randomUUID()}`;
    let refusedAtCut = 0;
    onRequest = () => {
      // The receiver has the request; the database goes before the attempt can be recorded.
      proxy.cut();
      refusedAtCut = proxy.refused;
      onRequest = () => {};
    };
    const agentId = await eventTo(path);

    await vi.waitFor(() => expect(received).toContain(path), { timeout: 15_000, interval: 20 });
    // The pool tried to record (and reconnect) several times while the database was away.
    await vi.waitFor(() => expect(proxy.refused - refusedAtCut).toBeGreaterThanOrEqual(3), {
      timeout: 15_000,
      interval: 20,
    });
    proxy.restore();

    const delivery = await vi.waitFor(
      async () => {
        const row = await ctx.db('webhook_deliveries').where({ agent_id: agentId }).first();
        expect(row?.attempt_count).toBeGreaterThanOrEqual(1);
        return row;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    const attempts = await ctx.db('webhook_delivery_attempts').where({ delivery_id: delivery.id });
    expect(attempts).toMatchObject([{ status: 'succeeded', http_status: 200, attempt_number: 1 }]);
    const job = await ctx.db.raw('select state from pgboss.job where id = ?', [attempts[0].job_id]);
    expect(job.rows[0]?.state).toBe('completed');
    expect(received.filter((p) => p === path)).toHaveLength(1);
  });
});

describe('a send job whose worker vanished', () => {
  it(`is queued again by the supervisor within ${SUPERVISE_INTERVAL_SECONDS} s of its 60 s expiry, to run 30-60 s later`, async () => {
    // An active job that started 61 s ago and was never finished: its worker is gone.
    const id = randomUUID();
    await ctx.db.raw(
      `insert into pgboss.job (id, name, data, state, retry_limit, retry_delay, retry_backoff, expire_in, started_on, start_after)
       select ?, name, ?::jsonb, 'active', retry_limit, retry_delay, retry_backoff, make_interval(secs => expire_seconds),
              now() - interval '61 seconds', now() - interval '61 seconds'
       from pgboss.queue where name = ?`,
      [id, JSON.stringify({ deliveryId: randomUUID(), trigger: 'event' }), WEBHOOK_SEND_QUEUE],
    );
    const row = async () =>
      (
        await ctx.db.raw(
          `select state, extract(epoch from start_after - now()) as wait, expire_in from pgboss.job where id = ?`,
          [id],
        )
      ).rows[0] as { state: string; wait: number; expire_in: { minutes?: number; seconds?: number } };
    expect((await row()).expire_in).toEqual({ minutes: 1 });

    const retried = await vi.waitFor(
      async () => {
        const current = await row();
        expect(current.state).toBe('retry');
        return current;
      },
      { timeout: (SUPERVISE_INTERVAL_SECONDS + 5) * 1000, interval: 200 },
    );
    expect(Number(retried.wait)).toBeGreaterThan(25);
    expect(Number(retried.wait)).toBeLessThanOrEqual(60);
  });
});
