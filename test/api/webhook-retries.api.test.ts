import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS, parseConfig } from '../../src/config.js';
import { WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { WebhookDeliverySchema } from '../../src/modules/webhooks/webhook-delivery.schemas.js';
import { paginated } from '../../src/openapi/common.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { buildInternals, type Internals } from '../support/internals.js';
import { waitFor } from '../support/server-process.js';

/** The schedule the tests run with: 7 retries (8 attempts), as the Standard Webhooks one, but 0.1 s apart. */
const SCHEDULE = '0.1,0.1,0.1,0.1,0.1,0.1,0.1';

type Received = { path: string; headers: IncomingHttpHeaders; body: string; at: number };

/**
 * A receiver whose answers per path are scripted: `script(path, [500, 500, 200])` answers the first
 * two requests 500 and every later one 200 (the last status repeats). Every request moves the test
 * clock on by a second, so each attempt is signed at a timestamp of its own.
 */
async function startScriptedReceiver(onRequest: () => void) {
  const received: Received[] = [];
  const scripts = new Map<string, number[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      onRequest();
      const statuses = scripts.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0]!;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url(statuses: number[]) {
      const path = `/hook/${randomBytes(6).toString('hex')}`;
      scripts.set(path, [...statuses]);
      return `http://127.0.0.1:${port}${path}`;
    },
    requestsTo: (url: string) => received.filter((r) => r.path === new URL(url).pathname),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let ctx: TestContext;
let w: World;
let receiver: Awaited<ReturnType<typeof startScriptedReceiver>>;
let secret: string;

beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_RETRY_SCHEDULE_SECONDS: SCHEDULE } });
  w = await ctx.build.world();
  receiver = await startScriptedReceiver(() => ctx.clock.advance(1000));
  secret = (await ctx.http.get(`/v1/organization/${w.orgId}/webhook-secret`).set('Authorization', `Bearer ${w.token}`))
    .body.secret;
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

type Delivery = {
  id: string;
  status: string;
  retries: boolean;
  next_retry_at: string | null;
  attempt_count: number;
  attempts: { attempt: number; trigger: string; status: string }[];
};

async function deliveriesOf(agentId: string): Promise<Delivery[]> {
  const res = await ctx.http.get(`/v1/agents/${agentId}/webhook-deliveries`).set('X-API-Key', w.key).expect(200);
  expectSchema(res, paginated(WebhookDeliverySchema));
  return res.body.data;
}

async function agentWith(url: string, retries: boolean): Promise<string> {
  return (await ctx.build.agent(w.orgId, { post_call_webhook_url: url, post_call_webhook_retries: retries })).id;
}

function recordCall(agentId: string, internals: Internals = ctx.internals): Promise<string> {
  return ctx.db.transaction((trx) =>
    internals.events.record(trx, {
      organization_id: w.orgId,
      agent_id: agentId,
      type: 'call.completed',
      payload: { call: { id: randomBytes(4).toString('hex'), agent_id: agentId } },
    }),
  );
}

async function jobsOf(deliveryId: string): Promise<{ state: string; data: { trigger: string; retry?: number } }[]> {
  return ctx
    .db('pgboss.job')
    .where({ name: WEBHOOK_SEND_QUEUE })
    .whereRaw(`data->>'deliveryId' = ?`, [deliveryId])
    .orderBy('created_on')
    .select('state', 'data');
}

/** Runs the worker (its own polling, as in the server) until `condition` holds. */
async function runWorkerUntil(condition: () => Promise<boolean>, what: string, internals = ctx.internals) {
  await internals.webhookWorker.start();
  try {
    await waitFor(condition, 15_000, what);
  } finally {
    await internals.webhookWorker.stop();
  }
}

/** A second "instance": its own job queue connections and worker, on the same database. */
async function instance(schedule = SCHEDULE): Promise<{ queue: JobQueue; internals: Internals }> {
  const queue = await JobQueue.start(ctx.config.DATABASE_URL!, ctx.logger, { background: false });
  const config = parseConfig({ ...configEnv(), WEBHOOK_RETRY_SCHEDULE_SECONDS: schedule });
  return { queue, internals: buildInternals({ db: ctx.db, queue, clock: ctx.clock, config, logger: ctx.logger }) };
}

function configEnv(): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: ctx.config.DATABASE_URL!,
    JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_TIMEOUT_MS: '500',
  };
}

describe('configuration', () => {
  it('defaults to the Standard Webhooks schedule and refuses a bad one', () => {
    expect(parseConfig(configEnv()).WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS).toHaveLength(7);
    expect(
      parseConfig({ ...configEnv(), WEBHOOK_RETRY_SCHEDULE_SECONDS: '1, 2.5,60' }).WEBHOOK_RETRY_SCHEDULE_SECONDS,
    ).toEqual([1, 2.5, 60]);
    for (const bad of ['0', '5,x', '-1', '5,,6', '100000'])
      expect(() => parseConfig({ ...configEnv(), WEBHOOK_RETRY_SCHEDULE_SECONDS: bad })).toThrow(
        /WEBHOOK_RETRY_SCHEDULE_SECONDS/,
      );
  });
});

describe('the settings', () => {
  it('post_call_webhook_retries: false by default, set by PATCH, versioned, 400 for a non-boolean', async () => {
    const created = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'Retries', phone_number: ctx.build.phone() })
      .expect(201);
    expect(created.body.post_call_webhook_retries).toBe(false);
    const agentId = created.body.id as string;
    const patched = await ctx.http
      .patch(`/v1/agents/${agentId}`)
      .set('X-API-Key', w.key)
      .send({ post_call_webhook_retries: true })
      .expect(200);
    expect(patched.body.post_call_webhook_retries).toBe(true);
    const diff = await ctx.http.get(`/v1/agents/${agentId}/versions/1/diff/2`).set('X-API-Key', w.key).expect(200);
    expect(diff.body.changes).toEqual([
      { op: 'changed', path: 'post_call_webhook_retries', old_value: false, new_value: true },
    ]);
    const bad = await ctx.http
      .patch(`/v1/agents/${agentId}`)
      .set('X-API-Key', w.key)
      .send({ post_call_webhook_retries: 'yes' })
      .expect(400);
    expect(bad.body.error.details[0].field).toBe('post_call_webhook_retries');
  });

  it('webhook_retries on /v1/me: false by default, set by PATCH, 400 for a non-boolean', async () => {
    const user = await ctx.build.user(w.orgId, 'member');
    const token = ctx.build.token(user.id);
    const me = await ctx.http.get('/v1/me').set('Authorization', `Bearer ${token}`).expect(200);
    expect(me.body.webhook_retries).toBe(false);
    const patched = await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${token}`)
      .send({ webhook_retries: true })
      .expect(200);
    expect(patched.body.webhook_retries).toBe(true);
    const bad = await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${token}`)
      .send({ webhook_retries: 1 })
      .expect(400);
    expect(bad.body.error.details[0].field).toBe('webhook_retries');
  });
});

describe('automatic retries', () => {
  it('retries a failing receiver with the same webhook-id and a fresh valid signature until it succeeds', async () => {
    const url = receiver.url([500, 503, 200]);
    const agentId = await agentWith(url, true);
    const eventId = await recordCall(agentId);
    await runWorkerUntil(
      async () => (await deliveriesOf(agentId))[0]?.status === 'succeeded',
      'the delivery to succeed',
    );

    const requests = receiver.requestsTo(url);
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    const timestamps = requests.map((r) => Number(r.headers['webhook-timestamp']));
    expect(timestamps[1]).toBeGreaterThan(timestamps[0]!);
    expect(timestamps[2]).toBeGreaterThan(timestamps[1]!);
    expect(new Set(requests.map((r) => r.headers['webhook-signature'])).size).toBe(3);
    for (const r of requests) {
      expect(() =>
        new Webhook(secret).verify(r.body, {
          'webhook-id': String(r.headers['webhook-id']),
          'webhook-timestamp': String(r.headers['webhook-timestamp']),
          'webhook-signature': String(r.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    // The retries waited for their delay (0.1 s each).
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(90);

    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'succeeded', retries: true, next_retry_at: null, attempt_count: 3 });
    expect(delivery!.attempts.map((a) => [a.attempt, a.trigger, a.status])).toEqual([
      [1, 'event', 'failed'],
      [2, 'retry', 'failed'],
      [3, 'retry', 'succeeded'],
    ]);
  });

  it('makes 8 attempts in all (7 retries), then the delivery is failed and nothing more is sent', async () => {
    const url = receiver.url([500]);
    const agentId = await agentWith(url, true);
    await recordCall(agentId);
    await runWorkerUntil(async () => (await deliveriesOf(agentId))[0]?.status === 'failed', 'the delivery to fail');

    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', next_retry_at: null, attempt_count: 8 });
    expect(delivery!.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(delivery!.attempts.map((a) => a.trigger)).toEqual(['event', ...Array(7).fill('retry')]);
    expect(receiver.requestsTo(url)).toHaveLength(8);
    expect((await jobsOf(delivery!.id)).map((j) => j.state)).toEqual(Array(8).fill('completed'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(8);
  });

  it('is off by default: one attempt, failed, no retry queued', async () => {
    const url = receiver.url([500]);
    const agentId = (await ctx.build.agent(w.orgId, { post_call_webhook_url: url })).id;
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', retries: false, next_retry_at: null, attempt_count: 1 });
    expect(await jobsOf(delivery!.id)).toHaveLength(1);
    expect(receiver.requestsTo(url)).toHaveLength(1);
  });

  it('does not retry an address the guard refuses', async () => {
    const url = receiver.url([200]).replace('http://', 'http://user:pw@');
    const agentId = await agentWith(url, true);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', retries: true, next_retry_at: null, attempt_count: 1 });
    expect(await jobsOf(delivery!.id)).toHaveLength(1);
  });

  it("follows the setting of a member's /v1/me URL", async () => {
    const url = receiver.url([500, 200]);
    const user = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${ctx.build.token(user.id)}`)
      .send({ webhook_url: url, webhook_events: ['agent.updated'], webhook_retries: true })
      .expect(200);
    const agentId = await ctx.build.freshAgent(w.orgId);
    await ctx.db.transaction((trx) =>
      ctx.internals.events.record(trx, {
        organization_id: w.orgId,
        agent_id: agentId,
        type: 'agent.updated',
        payload: { agent_id: agentId, version: 1, change: 'agent.updated', changed_at: new Date().toISOString() },
      }),
    );
    await runWorkerUntil(async () => receiver.requestsTo(url).length === 2, 'the retry to the member URL');
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'succeeded', retries: true, attempt_count: 2 });
  });
});

describe('retries and redelivery', () => {
  it('a successful redelivery cancels the pending retry; a failed one leaves it scheduled', async () => {
    // An instance whose first retry is an hour away: the test makes it due by hand.
    const { queue, internals } = await instance('3600');
    try {
      const url = receiver.url([500, 500, 200]);
      const agentId = await agentWith(url, true);
      await recordCall(agentId, internals);
      await internals.webhookWorker.drain();
      let [delivery] = await deliveriesOf(agentId);
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(new Date(delivery!.next_retry_at!).getTime()).toBeGreaterThan(ctx.clock.now().getTime() + 3_500_000);

      const redeliver = () =>
        ctx.http
          .post(`/v1/agents/${agentId}/webhook-deliveries/${delivery!.id}/redeliver`)
          .set('X-API-Key', w.key)
          .expect(202);
      await redeliver();
      await internals.webhookWorker.drain();
      [delivery] = await deliveriesOf(agentId);
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 2 });
      expect(delivery!.next_retry_at).not.toBeNull();

      await redeliver();
      await internals.webhookWorker.drain();
      [delivery] = await deliveriesOf(agentId);
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 3, next_retry_at: null });
      expect(delivery!.attempts.map((a) => a.trigger)).toEqual(['event', 'redelivery', 'redelivery']);

      // The retry job falls due: it finds the delivery no longer waiting for it and sends nothing.
      await ctx
        .db('pgboss.job')
        .where({ name: WEBHOOK_SEND_QUEUE, state: 'created' })
        .whereRaw(`data->>'deliveryId' = ?`, [delivery!.id])
        .update({ start_after: ctx.db.raw('now()') });
      expect(await internals.webhookWorker.drain()).toBe(1);
      expect(receiver.requestsTo(url)).toHaveLength(3);
      expect((await deliveriesOf(agentId))[0]!.attempt_count).toBe(3);
      expect((await jobsOf(delivery!.id)).map((j) => j.state)).toEqual(Array(4).fill('completed'));
    } finally {
      await queue.stop();
    }
  });
});

describe('durability', () => {
  it('a retry pending when its instance stops is sent by a new instance', async () => {
    const first = await instance('1');
    const url = receiver.url([500, 200]);
    const agentId = await agentWith(url, true);
    let deliveryId: string;
    try {
      await recordCall(agentId, first.internals);
      await first.internals.webhookWorker.drain();
      const [delivery] = await deliveriesOf(agentId);
      deliveryId = delivery!.id;
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
    } finally {
      await first.queue.stop();
    }
    expect((await jobsOf(deliveryId)).map((j) => [j.state, j.data.trigger, j.data.retry])).toEqual([
      ['completed', 'event', undefined],
      ['created', 'retry', 1],
    ]);

    const second = await instance('1');
    try {
      await runWorkerUntil(
        async () => (await deliveriesOf(agentId))[0]?.status === 'succeeded',
        'the new instance to send the retry',
        second.internals,
      );
    } finally {
      await second.queue.stop();
    }
    expect(receiver.requestsTo(url)).toHaveLength(2);
    expect((await deliveriesOf(agentId))[0]!.attempts.map((a) => [a.attempt, a.trigger])).toEqual([
      [1, 'event'],
      [2, 'retry'],
    ]);
  });

  it('two instances polling together send each attempt once', async () => {
    const a = await instance();
    const b = await instance();
    const urls = [0, 1, 2, 3, 4].map(() => receiver.url([500, 500, 500, 200]));
    try {
      const agentIds = await Promise.all(urls.map((url) => agentWith(url, true)));
      for (const agentId of agentIds) await recordCall(agentId, a.internals);
      await Promise.all([a.internals.webhookWorker.start(), b.internals.webhookWorker.start()]);
      try {
        await waitFor(
          async () => {
            const all = await Promise.all(agentIds.map(async (id) => (await deliveriesOf(id))[0]?.status));
            return all.every((s) => s === 'succeeded');
          },
          15_000,
          'every delivery to succeed',
        );
      } finally {
        await Promise.all([a.internals.webhookWorker.stop(), b.internals.webhookWorker.stop()]);
      }
      for (const [i, url] of urls.entries()) {
        expect(receiver.requestsTo(url)).toHaveLength(4);
        const [delivery] = await deliveriesOf(agentIds[i]!);
        expect(delivery!.attempts.map((x) => [x.attempt, x.trigger, x.status])).toEqual([
          [1, 'event', 'failed'],
          [2, 'retry', 'failed'],
          [3, 'retry', 'failed'],
          [4, 'retry', 'succeeded'],
        ]);
      }
    } finally {
      await a.queue.stop();
      await b.queue.stop();
    }
  });
});
