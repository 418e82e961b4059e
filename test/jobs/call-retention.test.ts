import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_QUEUE } from '../../src/jobs/queue-definitions.js';
import { CallRetention, CallRetentionWorker } from '../../src/modules/calls/call-retention.worker.js';
import { CallRepository } from '../../src/modules/calls/call.repository.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const DAY = 86_400_000;

async function reportAt(world: World, agentId: string, at: Date, callId: string) {
  ctx.clock.set(at);
  const res = await ctx.http
    .post(`/v1/agents/${agentId}/calls`)
    .set('X-API-Key', world.key)
    .send({
      call_id: callId,
      phone_number: '+4930123456',
      customer_name: 'Erika Mustermann',
      customer_request: 'Rückruf',
      call_summary: 'Erika wants a call back.',
      note: 'Call Erika at home',
      duration: 42,
      done: true,
      general_success: true,
      transcript: [{ role: 'user', text: 'Hier ist Erika.' }],
    })
    .expect(201);
  return res.body.id as string;
}

describe('call retention', () => {
  it("purges the personal data of calls older than the agent's retention_days, 90 by default, and keeps the rest", async () => {
    const world = await ctx.build.world();
    const shortRetention = (await ctx.build.agent(world.orgId, { retention_days: 30 })).id;
    const now = new Date('2026-09-01T12:00:00Z');
    const old30 = await reportAt(world, shortRetention, new Date(now.getTime() - 31 * DAY), 'a-31');
    const young30 = await reportAt(world, shortRetention, new Date(now.getTime() - 29 * DAY), 'a-29');
    const old90 = await reportAt(world, world.agentId, new Date(now.getTime() - 91 * DAY), 'b-91');
    const young90 = await reportAt(world, world.agentId, new Date(now.getTime() - 31 * DAY), 'b-31');
    ctx.clock.set(now);

    expect(await ctx.internals.callRetention.run()).toBe(2);

    const purged = await ctx.http
      .get(`/v1/agents/${shortRetention}/calls/${old30}`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(purged.body).toMatchObject({
      is_purged: true,
      transcript: null,
      phone_number: null,
      customer_name: null,
      customer_request: null,
      call_summary: null,
      note: null,
      // What is not personal stays, so statistics still add up.
      call_id: 'a-31',
      duration: 42,
      done: true,
      general_success: true,
    });
    expect((await ctx.db('calls').where({ id: old90 }).first()).is_purged).toBe(true);
    for (const id of [young30, young90]) {
      expect(await ctx.db('calls').where({ id }).first()).toMatchObject({
        is_purged: false,
        customer_name: 'Erika Mustermann',
      });
    }
    // The stored call.completed bodies (what webhooks deliver) lose the same fields, the young ones keep theirs.
    const bodyOf = async (id: string) =>
      (
        await ctx
          .db('events')
          .where({ organization_id: world.orgId, type: 'call.completed' })
          .whereRaw(`payload->'call'->>'id' = ?`, [id])
          .first()
      ).payload.call;
    for (const id of [old30, old90]) {
      expect(await bodyOf(id)).toMatchObject({
        id,
        customer_name: null,
        customer_request: null,
        phone_number: null,
        call_summary: null,
        transcript: null,
        duration: 42,
        done: true,
      });
    }
    for (const id of [young30, young90]) {
      expect(await bodyOf(id)).toMatchObject({ customer_name: 'Erika Mustermann', phone_number: '+4930123456' });
    }
  });

  it("uses the organization's call_retention_days set by the dashboard, and the agent's retention_days over it", async () => {
    const world = await ctx.build.world();
    const patched = await ctx.http
      .patch(`/v1/organization/${world.orgId}`)
      .set('Authorization', `Bearer ${world.token}`)
      .send({ call_retention_days: 10 })
      .expect(200);
    expect(patched.body.call_retention_days).toBe(10);
    const ownRetention = (await ctx.build.agent(world.orgId, { retention_days: 30 })).id;
    const now = new Date('2026-10-01T12:00:00Z');
    const old11 = await reportAt(world, world.agentId, new Date(now.getTime() - 11 * DAY), 'org-11');
    const young9 = await reportAt(world, world.agentId, new Date(now.getTime() - 9 * DAY), 'org-9');
    const agent11 = await reportAt(world, ownRetention, new Date(now.getTime() - 11 * DAY), 'agent-11');
    ctx.clock.set(now);
    await ctx.internals.callRetention.run();
    const purged = async (id: string) => (await ctx.db('calls').where({ id }).first()).is_purged;
    expect(await purged(old11)).toBe(true);
    expect(await purged(young9)).toBe(false);
    expect(await purged(agent11)).toBe(false);
  });

  it('purges nothing twice, and takes a call once it ages past the retention', async () => {
    const world = await ctx.build.world();
    const start = new Date('2026-10-01T00:00:00Z');
    const id = await reportAt(world, world.agentId, start, 'c-1');
    ctx.clock.set(new Date(start.getTime() + 90 * DAY - 1000));
    await ctx.internals.callRetention.run();
    expect((await ctx.db('calls').where({ id }).first()).is_purged).toBe(false);
    ctx.clock.set(new Date(start.getTime() + 90 * DAY + 1000));
    expect(await ctx.internals.callRetention.run()).toBeGreaterThanOrEqual(1);
    expect((await ctx.db('calls').where({ id }).first()).is_purged).toBe(true);
    const purgedAt = (await ctx.db('calls').where({ id }).first()).purged_at;
    expect(await ctx.internals.callRetention.run()).toBe(0);
    expect((await ctx.db('calls').where({ id }).first()).purged_at).toEqual(purgedAt);
  });

  it('purges in batches until nothing is left', async () => {
    const world = await ctx.build.world();
    const agent = await ctx.build.agent(world.orgId, { retention_days: 1 });
    const createdAt = new Date('2026-01-01T00:00:00Z');
    await ctx.db('calls').insert(
      Array.from({ length: 1203 }, (_, i) => ({
        organization_id: world.orgId,
        agent_id: agent.id,
        call_id: `bulk-${i}`,
        phone_number: '+4930000',
        duration: 1,
        created_at: createdAt,
        updated_at: createdAt,
      })),
    );
    ctx.clock.set('2026-02-01T00:00:00Z');
    expect(await ctx.internals.callRetention.run()).toBeGreaterThanOrEqual(1203);
    expect(await ctx.db('calls').where({ agent_id: agent.id, is_purged: false }).count({ n: '*' }).first()).toEqual({
      n: 0,
    });
  });

  it('is scheduled hourly through the job queue as a background worker', async () => {
    const worker = new CallRetentionWorker(ctx.queue, ctx.internals.callRetention, ctx.clock);
    await worker.start();
    const schedules = await ctx.queue.boss.getSchedules();
    expect(schedules.map((s) => [s.name, s.cron])).toContainEqual([RETENTION_QUEUE, '17 * * * *']);
    await worker.stop();
  });

  it('runs the pass when its job is taken from the queue', async () => {
    const world = await ctx.build.world();
    const agent = await ctx.build.agent(world.orgId, { retention_days: 1 });
    const id = await reportAt(world, agent.id, new Date('2026-11-01T00:00:00Z'), 'q-1');
    ctx.clock.set('2026-11-03T00:00:00Z');
    await ctx.queue.send(RETENTION_QUEUE, {});
    const ran = await ctx.queue.runPending(RETENTION_QUEUE, async () => {
      await ctx.internals.callRetention.run();
    });
    expect(ran).toBe(1);
    expect((await ctx.db('calls').where({ id }).first()).is_purged).toBe(true);
  });

  async function expiredCalls(n: number): Promise<string> {
    const world = await ctx.build.world();
    const agent = await ctx.build.agent(world.orgId, { retention_days: 1 });
    const createdAt = new Date('2026-01-01T00:00:00Z');
    await ctx.db('calls').insert(
      Array.from({ length: n }, (_, i) => ({
        organization_id: world.orgId,
        agent_id: agent.id,
        call_id: `bounded-${i}`,
        customer_name: 'Erika',
        duration: 1,
        created_at: createdAt,
        updated_at: createdAt,
      })),
    );
    ctx.clock.set('2026-02-01T00:00:00Z');
    return agent.id;
  }
  const unpurged = async (agentId: string) =>
    Number((await ctx.db('calls').where({ agent_id: agentId, is_purged: false }).count({ n: '*' }).first())!.n);

  it('purges at most maxBatches batches per job and queues the continuation until nothing is left', async () => {
    const agentId = await expiredCalls(45);
    const retention = new CallRetention(ctx.internals.callRepository, ctx.clock, ctx.logger, {
      batchSize: 10,
      maxBatches: 2,
    });
    expect(await retention.runBounded(ctx.clock.now())).toEqual({ purged: 20, more: true });
    expect(await unpurged(agentId)).toBe(25);

    const worker = new CallRetentionWorker(ctx.queue, retention, ctx.clock);
    await ctx.queue.send(RETENTION_QUEUE, {});
    // 20 + 5: the first job queues a second one, which finds less than a batch and stops.
    expect(await ctx.queue.runPending(RETENTION_QUEUE, () => worker.runJob())).toBe(2);
    expect(await unpurged(agentId)).toBe(0);
  });

  it('stops after the current batch once stopped, leaving the rest for the next run', async () => {
    const agentId = await expiredCalls(30);
    const stop = new AbortController();
    // The real repository; the signal is pulled right after its first batch, as a shutdown would.
    const repository = new CallRepository(ctx.db);
    const purgeExpired = repository.purgeExpired.bind(repository);
    repository.purgeExpired = async (now, size) => {
      const n = await purgeExpired(now, size);
      stop.abort();
      return n;
    };
    const retention = new CallRetention(repository, ctx.clock, ctx.logger, { batchSize: 10, maxBatches: 100 });
    expect(await retention.runBounded(ctx.clock.now(), stop.signal)).toEqual({ purged: 10, more: true });
    expect(await unpurged(agentId)).toBe(20);
    expect(await retention.run()).toBe(20);
    expect(await unpurged(agentId)).toBe(0);
  });
});
