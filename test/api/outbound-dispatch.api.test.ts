import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext({ config: { OUTBOUND_MAX_CONCURRENT_PER_AGENT: '1000' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

/** Monday 30 November 2026, 10:00 in Berlin. */
const NOW = new Date('2026-11-30T09:00:00.000Z');

type Claimed = { job_id: string; attempt_id: string; campaign_id: string | null };

/** `count` due jobs, inserted directly (the API's creation is tested elsewhere). */
async function dueJobs(agentIds: string[], count: number, campaignId: string | null = null) {
  const rows = Array.from({ length: count }, (_, i) => ({
    organization_id: w.orgId,
    agent_id: agentIds[i % agentIds.length],
    campaign_id: campaignId,
    to_number: `+4930${String(10_000_000 + i)}`,
    purpose: 'reminder',
    status: 'scheduled',
    window: JSON.stringify({ days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }),
    respect_opening_hours: true,
    max_attempts: 3,
    retry_after_minutes: 60,
    variables: '{}',
    next_attempt_at: NOW,
    created_at: NOW,
    updated_at: NOW,
  }));
  for (let i = 0; i < rows.length; i += 500) await ctx.db('outbound_jobs').insert(rows.slice(i, i + 500));
}

/** A weekday reminder campaign of `agentId` with room for `maxConcurrent` calls, inserted directly. */
async function weekdayCampaign(agentId: string, name: string, maxConcurrent: number): Promise<{ id: string }> {
  const [campaign] = await ctx
    .db('outbound_campaigns')
    .insert({
      organization_id: w.orgId,
      agent_id: agentId,
      name,
      purpose: 'reminder',
      window: JSON.stringify({ days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }),
      max_concurrent: maxConcurrent,
      max_attempts: 3,
      retry_after_minutes: 60,
    })
    .returning('id');
  return campaign as { id: string };
}

async function claim(max: number): Promise<Claimed[]> {
  const res = await ctx.http.post('/v1/outbound/claim').set('X-API-Key', w.key).send({ max, lease_seconds: 300 });
  expect(res.status).toBe(200);
  return res.body.data as Claimed[];
}

describe('three dialers at once', () => {
  it('claim 1,000 due jobs, each exactly once, and report them all', async () => {
    ctx.clock.set(NOW);
    const agents = [w.agentId, ...(await Promise.all([1, 2, 3].map(() => ctx.build.freshAgent(w.orgId))))];
    await dueJobs(agents, 1000);
    const seen: string[] = [];
    const dialer = async () => {
      for (;;) {
        const batch = await claim(50);
        if (batch.length === 0) {
          const left = await ctx.db('outbound_jobs').where({ organization_id: w.orgId, status: 'scheduled' }).count();
          if (Number(left[0]!.count) === 0) return;
          continue;
        }
        seen.push(...batch.map((j) => j.job_id));
        // One result at a time per dialer: three dialers' requests fit the test pool's connections.
        for (const job of batch)
          await ctx.http
            .post(`/v1/outbound/attempts/${job.attempt_id}/result`)
            .set('X-API-Key', w.key)
            .send({ outcome: 'answered' })
            .expect(200);
      }
    };
    await Promise.all([dialer(), dialer(), dialer()]);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen).size).toBe(1000);
    const statuses = await ctx
      .db('outbound_jobs')
      .where({ organization_id: w.orgId })
      .groupBy('status')
      .select('status')
      .count();
    expect(statuses.map((s) => [s.status, Number(s.count)])).toEqual([['completed', 1000]]);
    const attempts = await ctx.db('outbound_attempts').where({ organization_id: w.orgId }).count();
    expect(Number(attempts[0]!.count)).toBe(1000);
  }, 600_000);

  it("never has more of a campaign's jobs in progress than its max_concurrent", async () => {
    ctx.clock.set(NOW);
    // Only this test's jobs are due.
    await ctx
      .db('outbound_jobs')
      .where({ organization_id: w.orgId, status: 'scheduled' })
      .update({ status: 'cancelled' });
    const agentId = await ctx.build.freshAgent(w.orgId);
    const campaign = await weekdayCampaign(agentId, 'Erinnerungen', 5);
    await dueJobs([agentId], 40, campaign.id);
    const claimed = (await Promise.all([claim(50), claim(50), claim(50)])).flat();
    expect(claimed.filter((j) => j.campaign_id === campaign.id)).toHaveLength(5);
    expect(await claim(50)).toEqual([]);

    // Claims of a full campaign answer at once without locking its jobs; a slot freed by a result
    // goes to exactly one of three claimers asking at the same time.
    await ctx.http
      .post(`/v1/outbound/attempts/${claimed[0]!.attempt_id}/result`)
      .set('X-API-Key', w.key)
      .send({ outcome: 'answered' })
      .expect(200);
    const refill = (await Promise.all([claim(50), claim(50), claim(50)])).flat();
    expect(refill).toHaveLength(1);
    expect(claimed.map((j) => j.job_id)).not.toContain(refill[0]!.job_id);
    const running = await ctx.db('outbound_jobs').where({ campaign_id: campaign.id, status: 'in_progress' }).count();
    expect(Number(running[0]!.count)).toBe(5);
  });
});

describe('what one claim hands out', () => {
  /** Only the jobs made after this are due. */
  async function onlyNewJobsDue() {
    await ctx
      .db('outbound_jobs')
      .where({ organization_id: w.orgId })
      .whereIn('status', ['scheduled', 'in_progress'])
      .update({ status: 'cancelled' });
  }

  async function claimAudited(max: number): Promise<{ data: Claimed[]; auditRows: number }> {
    const res = await ctx.http.post('/v1/outbound/claim').set('X-API-Key', w.key).send({ max, lease_seconds: 300 });
    expect(res.status).toBe(200);
    const rows = await ctx.db('audit_log').where({ request_id: res.headers['x-request-id'] });
    return { data: res.body.data as Claimed[], auditRows: rows.length };
  }

  it('skips a full campaign without taking room of its agent’s other jobs', async () => {
    ctx.clock.set(NOW);
    await onlyNewJobsDue();
    const agentId = await ctx.build.freshAgent(w.orgId);
    const campaign = await weekdayCampaign(agentId, 'Zwei zugleich', 2);
    // The campaign's five jobs are due first, the agent's three jobs without a campaign after them.
    await dueJobs([agentId], 5, campaign.id);
    ctx.clock.set(new Date(NOW.getTime() + 60_000));
    await ctx.db('outbound_jobs').insert(
      [0, 1, 2].map((i) => ({
        organization_id: w.orgId,
        agent_id: agentId,
        to_number: `+4930${String(20_000_000 + i)}`,
        purpose: 'callback',
        status: 'scheduled',
        window: JSON.stringify({ days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }),
        max_attempts: 3,
        retry_after_minutes: 60,
        variables: '{}',
        next_attempt_at: new Date(NOW.getTime() + 1000),
      })),
    );
    const { data, auditRows } = await claimAudited(50);
    expect(data.filter((j) => j.campaign_id === campaign.id)).toHaveLength(2);
    expect(data.filter((j) => j.campaign_id === null)).toHaveLength(3);
    expect(auditRows).toBe(1);
    // Nothing left to hand out: the answer is empty, and the claim is audited all the same.
    expect(await claimAudited(50)).toEqual({ data: [], auditRows: 1 });
  });

  it('settles a due job that may not be called now and hands out the others, audited once', async () => {
    ctx.clock.set(NOW);
    await onlyNewJobsDue();
    const agentId = await ctx.build.freshAgent(w.orgId);
    await dueJobs([agentId], 3);
    const jobs = await ctx
      .db('outbound_jobs')
      .where({ agent_id: agentId })
      .orderBy('to_number')
      .select('id', 'to_number');
    // Listed after it was scheduled, without the listing's blocking (a job whose call ran then): never handed out.
    await ctx.db('do_not_call').insert({ organization_id: w.orgId, phone_number: jobs[0]!.to_number, source: 'api' });
    const { data, auditRows } = await claimAudited(50);
    expect(data.map((j) => j.job_id).sort()).toEqual([jobs[1]!.id, jobs[2]!.id].sort());
    expect(auditRows).toBe(1);
    const blocked = await ctx.db('outbound_jobs').where({ id: jobs[0]!.id }).first();
    expect(blocked.status).toBe('blocked');
    // After business hours the next due job is not handed out but scheduled for the next morning.
    await dueJobs([agentId], 1);
    ctx.clock.set(new Date('2026-11-30T18:30:00.000Z'));
    await ctx
      .db('outbound_jobs')
      .where({ agent_id: agentId, status: 'scheduled' })
      .update({ next_attempt_at: new Date('2026-11-30T18:00:00.000Z') });
    expect(await claimAudited(50)).toEqual({ data: [], auditRows: 1 });
    const later = await ctx.db('outbound_jobs').where({ agent_id: agentId, status: 'scheduled' }).first();
    expect(new Date(later.next_attempt_at).toISOString()).toBe('2026-12-01T08:00:00.000Z');
    // The numbers of dueJobs come again in the next tests.
    await ctx.db('do_not_call').where({ organization_id: w.orgId }).delete();
  });
});

describe('a result other than answered', () => {
  it('schedules the next attempt, audited once, and answers a repeat the same', async () => {
    ctx.clock.set(NOW);
    await ctx
      .db('outbound_jobs')
      .where({ organization_id: w.orgId })
      .whereIn('status', ['scheduled', 'in_progress'])
      .update({ status: 'cancelled' });
    const agentId = await ctx.build.freshAgent(w.orgId);
    await dueJobs([agentId], 1);
    const [job] = await claim(1);
    const report = () =>
      ctx.http
        .post(`/v1/outbound/attempts/${job!.attempt_id}/result`)
        .set('X-API-Key', w.key)
        .send({ outcome: 'no_answer' });
    const first = await report();
    expect(first.status).toBe(200);
    expect(first.body.job).toMatchObject({ status: 'scheduled', next_attempt_at: '2026-11-30T10:00:00.000Z' });
    expect(first.body.attempt).toMatchObject({ outcome: 'no_answer', lease_expired: false });
    const again = await report();
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    for (const answer of [first, again])
      expect(await ctx.db('audit_log').where({ request_id: answer.headers['x-request-id'] })).toHaveLength(1);
    expect(await ctx.db('events').where({ agent_id: agentId })).toEqual([]);
  });
});
