import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { JobQueue } from '../../src/jobs/queue.js';
import { DEFAULT_SEND_LIMITS } from '../../src/modules/webhooks/webhook-send-pool.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook.worker.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/** Hanging receivers are cut only when their test closes them: the timeout is far away. */
let ctx: TestContext;
let ok: Receiver;
beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_TIMEOUT_MS: '30000' } });
  ok = await startReceiver();
});
afterAll(async () => {
  await ok.close();
  await ctx.close();
});

/** Waits for a condition the background worker brings about; fails after `timeoutMs` (a bound, not a sleep). */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function recordCall(world: World, agentId: string): Promise<string> {
  return ctx.db.transaction((trx) =>
    ctx.internals.events.record(trx, {
      organization_id: world.orgId,
      agent_id: agentId,
      type: 'call.completed',
      payload: { event: 'call.completed', call: { agent_id: agentId } },
    }),
  );
}

function workerWith(
  limits: {
    perTarget: number;
    perTargetWaiting: number;
    maxInFlight?: number;
    recordBatch?: number;
  },
  queue: JobQueue = ctx.queue,
) {
  return new WebhookWorker(ctx.db, queue, ctx.internals.webhookWorker.dispatcher, ctx.logger, {
    ...DEFAULT_SEND_LIMITS,
    maxInFlight: 16,
    pollIntervalMs: 20,
    deferSeconds: 1,
    ...limits,
  });
}

const attemptsTo = (url: string) =>
  ctx.db('webhook_delivery_attempts as a').join('webhook_deliveries as d', 'd.id', 'a.delivery_id').where({
    'd.target_url': url,
  });

describe('per-target concurrency of webhook sends', () => {
  it("delivers another organization's events while one organization's receiver hangs, and sends that receiver at most perTarget at a time", async () => {
    const hanging = await startReceiver();
    const slow = await ctx.build.world();
    const fast = await ctx.build.world();
    const hangUrl = hanging.url('hang');
    const okUrl = ok.url('ok');
    const slowAgent = await ctx.build.agent(slow.orgId, { post_call_webhook_url: hangUrl });
    const fastAgent = await ctx.build.agent(fast.orgId, { post_call_webhook_url: okUrl });
    // The hanging organization's events come first: with one job at a time they would block the queue.
    for (let i = 0; i < 6; i++) await recordCall(slow, slowAgent.id);
    await recordCall(fast, fastAgent.id);

    const worker = workerWith({ perTarget: 2, perTargetWaiting: 10 });
    const arrived = ok.nextRequestTo(okUrl);
    await worker.start();
    try {
      await arrived;
      await until('the fast delivery to be recorded', async () => (await attemptsTo(okUrl)).length === 1);
      // Every attempt to the hanging receiver is still open: none has been recorded.
      expect(await attemptsTo(hangUrl)).toEqual([]);
      await until('two requests to the hanging receiver', () => hanging.requestsTo(hangUrl).length === 2);
      expect(worker.pool.inFlightTo(`${slow.orgId} ${new URL(hangUrl).origin}`)).toBe(2);

      // The receiver goes away: the open attempts fail, the waiting ones are refused, all recorded.
      await hanging.close();
      await until('all six attempts', async () => (await attemptsTo(hangUrl)).length === 6);
    } finally {
      await worker.stop();
    }
    // Never more than two at a time reached the receiver: the four others found it closed.
    expect(hanging.requestsTo(hangUrl)).toHaveLength(2);
    expect((await attemptsTo(hangUrl)).every((a: { status: string }) => a.status === 'failed')).toBe(true);
  });

  it('puts jobs beyond the waiting limit back on the queue and still sends each exactly once', async () => {
    const hanging = await startReceiver();
    const world = await ctx.build.world();
    const hangUrl = hanging.url('hang');
    const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: hangUrl });
    for (let i = 0; i < 5; i++) await recordCall(world, agent.id);

    const worker = workerWith({ perTarget: 1, perTargetWaiting: 1 });
    await worker.start();
    try {
      await until('one open request', () => hanging.requestsTo(hangUrl).length === 1);
      // One in flight, one waiting in memory, three put back as new jobs for later.
      await until('three jobs put back', async () => {
        const rows = await ctx
          .db('pgboss.job')
          .where({ name: WEBHOOK_SEND_QUEUE, state: 'created' })
          .whereRaw(`start_after > now()`);
        return rows.length >= 3;
      });
      await hanging.close();
      await until('five attempts', async () => (await attemptsTo(hangUrl)).length === 5, 20_000);
    } finally {
      await worker.stop();
    }
    const deliveries = await ctx.db('webhook_deliveries').where({ target_url: hangUrl });
    expect(deliveries).toHaveLength(5);
    expect(deliveries.every((d: { attempt_count: number }) => d.attempt_count === 1)).toBe(true);
  });

  it('puts held jobs back when stopped, so another instance can take them', async () => {
    const hanging = await startReceiver();
    const world = await ctx.build.world();
    const hangUrl = hanging.url('hang');
    const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: hangUrl });
    for (let i = 0; i < 3; i++) await recordCall(world, agent.id);
    // The send pool's fetches can be held at a gate: stopping then waits for the fetch under way, and
    // the open request ends inside that window, which is where a freed slot must not start a held job.
    const gate = { closed: false, held: false, waiters: [] as (() => void)[] };
    const queue: JobQueue = Object.assign(Object.create(ctx.queue) as JobQueue, {
      fetch: async <T extends object>(name: string, batchSize: number) => {
        if (gate.closed && name === WEBHOOK_SEND_QUEUE) {
          gate.held = true;
          await new Promise<void>((resolve) => gate.waiters.push(resolve));
        }
        return ctx.queue.fetch<T>(name, batchSize);
      },
    });
    const worker = workerWith({ perTarget: 1, perTargetWaiting: 5 }, queue);
    await worker.start();
    await until('one open request', () => hanging.requestsTo(hangUrl).length === 1);
    gate.closed = true;
    await until('a fetch held at the gate', () => gate.held);
    const stopped = worker.stop();
    await hanging.close();
    await until('the open attempt recorded', async () => (await attemptsTo(hangUrl)).length >= 1);
    gate.closed = false;
    for (const open of gate.waiters) open();
    await stopped;
    // No held job started after stop began: the two are queued again, not lost and not active.
    expect(hanging.requestsTo(hangUrl)).toHaveLength(1);
    expect(await attemptsTo(hangUrl)).toHaveLength(1);
    const deliveryIds = (await ctx.db('webhook_deliveries').where({ target_url: hangUrl }).select('id')).map(
      (d: { id: string }) => d.id,
    );
    const queued = await ctx
      .db('pgboss.job')
      .where({ name: WEBHOOK_SEND_QUEUE, state: 'created' })
      .whereRaw(`data->>'deliveryId' = ANY(?)`, [deliveryIds]);
    expect(queued).toHaveLength(2);
  });
});

describe('batched dispatch and recording', () => {
  const sendJobsOf = (deliveryIds: string[]) =>
    ctx.db('pgboss.job').where({ name: WEBHOOK_SEND_QUEUE }).whereRaw(`data->>'deliveryId' = ANY(?)`, [deliveryIds]);

  it('dispatches events of several organizations together and records every attempt once, its job completed', async () => {
    const worlds = [await ctx.build.world(), await ctx.build.world(), await ctx.build.world()];
    const urls: string[] = [];
    const eventIds: string[] = [];
    for (const world of worlds) {
      const url = ok.url('ok');
      urls.push(url);
      const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: url });
      for (let i = 0; i < 4; i++) eventIds.push(await recordCall(world, agent.id));
    }
    // An agent without a URL (no delivery) and an employee event for a member's URL, in the same batches.
    const silent = await ctx.build.agent(worlds[0]!.orgId, { post_call_webhook_url: null });
    eventIds.push(await recordCall(worlds[0]!, silent.id));
    const memberUrl = ok.url('ok');
    const member = await ctx.build.user(worlds[1]!.orgId, 'member');
    await ctx.db('users').where({ id: member.id }).update({ webhook_url: memberUrl });
    eventIds.push(
      await ctx.db.transaction((trx) =>
        ctx.internals.events.record(trx, {
          organization_id: worlds[1]!.orgId,
          agent_id: null,
          type: 'employee.forwarding_created',
          payload: { event: 'employee.forwarding_created' },
        }),
      ),
    );

    const worker = workerWith({ perTarget: 2, perTargetWaiting: 10, recordBatch: 3 });
    await worker.start();
    try {
      await until('all deliveries recorded', async () => {
        const rows = await ctx.db('webhook_deliveries').whereIn('event_id', eventIds).whereNot({ status: 'pending' });
        return rows.length === 13;
      });
    } finally {
      await worker.stop();
    }
    for (const url of urls) expect(ok.requestsTo(url)).toHaveLength(4);
    expect(ok.requestsTo(memberUrl)).toHaveLength(1);
    const deliveries = await ctx.db('webhook_deliveries').whereIn('event_id', eventIds);
    expect(deliveries).toHaveLength(13);
    expect(deliveries.every((d: { status: string; attempt_count: number }) => d.status === 'succeeded')).toBe(true);
    expect(deliveries.every((d: { attempt_count: number }) => d.attempt_count === 1)).toBe(true);
    const attempts = await ctx.db('webhook_delivery_attempts').whereIn(
      'delivery_id',
      deliveries.map((d: { id: string }) => d.id),
    );
    expect(attempts.map((a: { attempt_number: number }) => a.attempt_number)).toEqual(Array(13).fill(1));
    const jobs = await sendJobsOf(deliveries.map((d: { id: string }) => d.id));
    expect(jobs.map((j: { state: string }) => j.state)).toEqual(Array(13).fill('completed'));
    const events = await ctx.db('events').whereIn('id', eventIds).whereNull('dispatched_at');
    expect(events).toEqual([]);
  });

  it('fails a dispatch or send job that cannot be handled on its own; the jobs fetched with it go through', async () => {
    const world = await ctx.build.world();
    const url = ok.url('ok');
    const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: url });
    await ctx.queue.send(EVENT_DISPATCH_QUEUE, { eventId: 'not-an-id' });
    await ctx.queue.send(WEBHOOK_SEND_QUEUE, { deliveryId: 'not-an-id', trigger: 'event' });
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) eventIds.push(await recordCall(world, agent.id));

    const worker = workerWith({ perTarget: 4, perTargetWaiting: 10 });
    await worker.start();
    try {
      await until('three deliveries recorded', async () => {
        const rows = await ctx.db('webhook_deliveries').whereIn('event_id', eventIds).where({ status: 'succeeded' });
        return rows.length === 3;
      });
      await until('the bad jobs failed', async () => {
        const bad = await ctx
          .db('pgboss.job')
          .whereIn('name', [EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE])
          .whereRaw(`coalesce(data->>'eventId', data->>'deliveryId') = 'not-an-id'`);
        return bad.length === 2 && bad.every((j: { state: string }) => j.state === 'retry' || j.state === 'failed');
      });
    } finally {
      await worker.stop();
    }
    expect(ok.requestsTo(url)).toHaveLength(3);
  });
});

describe('a job held for a busy target', () => {
  /** A receiver that keeps every request open until `release()`. */
  async function gate() {
    const open: ServerResponse[] = [];
    const got: { signature: string }[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        got.push({ signature: String(req.headers['webhook-signature']) });
        open.push(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url: (path: string) => `${base}/${path}`,
      got,
      release: () => {
        for (const res of open.splice(0)) res.writeHead(200).end('{}');
      },
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('is signed with the secret current when its attempt starts, not when it was fetched', async () => {
    const receiver = await gate();
    const world = await ctx.build.world();
    // Two agents of one organization on one origin: one target.
    const first = await ctx.build.agent(world.orgId, { post_call_webhook_url: receiver.url('a') });
    const second = await ctx.build.agent(world.orgId, { post_call_webhook_url: receiver.url('b') });
    const worker = workerWith({ perTarget: 1, perTargetWaiting: 5 });
    await worker.start();
    try {
      await recordCall(world, first.id);
      await until('the first request', () => receiver.got.length === 1);
      const eventId = await recordCall(world, second.id);
      await until('the second job taken and held', async () => {
        const jobs = await ctx
          .db('pgboss.job as j')
          .join('webhook_deliveries as d', ctx.db.raw(`d.id::text = j.data->>'deliveryId'`))
          .where({ 'j.name': WEBHOOK_SEND_QUEUE, 'j.state': 'active', 'd.event_id': eventId });
        return jobs.length === 1;
      });
      await ctx.http
        .post(`/v1/organization/${world.orgId}/webhook-secret/rotate`)
        .set('Authorization', `Bearer ${world.token}`)
        .expect(200);
      receiver.release();
      await until('the second request', () => receiver.got.length === 2);
      receiver.release();
    } finally {
      await worker.stop();
      await receiver.close();
    }
    // Before the rotation one secret signs; after it, the new and the previous one.
    expect(receiver.got.map((r) => r.signature.split(' ').length)).toEqual([1, 2]);
  });
});
