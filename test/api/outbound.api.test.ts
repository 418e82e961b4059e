import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AttemptResultResponseSchema,
  ClaimResponseSchema,
  DoNotCallEntrySchema,
  OutboundCallPageSchema,
  OutboundCallSchema,
  PreviewResponseSchema,
} from '../../src/modules/outbound/outbound.schemas.js';
import { EVENT_DISPATCH_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext({ config: { OUTBOUND_MAX_CONCURRENT_PER_AGENT: '3' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

/** Monday 30 November 2026, 10:00 in Berlin. */
const MONDAY_10 = '2026-11-30T09:00:00.000Z';
const base = (agentId: string) => `/v1/agents/${agentId}/outbound-calls`;

function create(agentId: string, body: Record<string, unknown>) {
  return ctx.http.post(base(agentId)).set('X-API-Key', w.key).send(body);
}

function claim(body: Record<string, unknown> = {}) {
  return ctx.http.post('/v1/outbound/claim').set('X-API-Key', w.key).send(body);
}

function report(attemptId: string, body: Record<string, unknown>) {
  return ctx.http.post(`/v1/outbound/attempts/${attemptId}/result`).set('X-API-Key', w.key).send(body);
}

/** Leaves no job of the organization due, so that a claim sees only what the test creates next. */
async function quiet() {
  await ctx
    .db('outbound_jobs')
    .where({ organization_id: w.orgId })
    .whereIn('status', ['scheduled', 'in_progress'])
    .update({
      status: 'cancelled',
    });
}

describe('POST /v1/agents/{agentId}/outbound-calls', () => {
  it('creates a job with the number in E.164 and next_attempt_at now when inside the window', async () => {
    ctx.clock.set(MONDAY_10);
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      to_number: '030 1234 5678',
      purpose: 'callback',
      variables: { name: 'Erika' },
    }).expect(201);
    const job = expectSchema(res, OutboundCallSchema);
    expect(job).toMatchObject({
      agent_id: agentId,
      to_number: '+493012345678',
      status: 'scheduled',
      purpose: 'callback',
      next_attempt_at: MONDAY_10,
      attempts: [],
      max_attempts: 3,
      retry_after_minutes: 60,
      window: { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' },
      respect_opening_hours: true,
      variables: { name: 'Erika' },
      campaign_id: null,
    });
  });

  it('puts next_attempt_at at the first allowed moment: a Saturday evening waits for Monday 09:00 local', async () => {
    ctx.clock.set('2026-11-28T19:00:00Z');
    const res = await create(w.agentId, { to_number: ctx.build.phone(), purpose: 'reminder' }).expect(201);
    expect(res.body.next_attempt_at).toBe('2026-11-30T08:00:00.000Z');
  });

  it('skips the public holidays of the agent’s Bundesland and its closed schedule exceptions', async () => {
    ctx.clock.set('2026-12-24T17:30:00Z');
    const agent = await ctx.build.agent(w.orgId, {
      bundesland: 'BY',
      schedule: {
        timezone: 'Europe/Berlin',
        rules: [{ days: [1, 2, 3, 4, 5, 6], start_time: '08:00', end_time: '20:00' }],
        exceptions: [{ date: '2026-12-28', closed: true }],
      },
    });
    await ctx.syncCaches();
    const window = { days: [1, 2, 3, 4, 5, 6], from: '10:00', to: '16:00' };
    const res = await create(agent.id, { to_number: ctx.build.phone(), purpose: 'callback', window }).expect(201);
    // 25 and 26 December are holidays, the 27th a Sunday, the 28th closed by the exception.
    expect(res.body.next_attempt_at).toBe('2026-12-29T09:00:00.000Z');

    const preview = await ctx.http
      .post(`${base(agent.id)}/preview`)
      .set('X-API-Key', w.key)
      .send({ window })
      .expect(200);
    const body = expectSchema(preview, PreviewResponseSchema);
    expect(body.timezone).toBe('Europe/Berlin');
    expect(body.moments).toHaveLength(5);
    expect(body.moments[0]).toEqual({
      at: '2026-12-29T09:00:00.000Z',
      until: '2026-12-29T15:00:00.000Z',
      skipped: [
        { date: '2026-12-25', reason: 'holiday' },
        { date: '2026-12-26', reason: 'holiday' },
        { date: '2026-12-27', reason: 'sunday' },
        { date: '2026-12-28', reason: 'exception' },
      ],
    });
    expect(body.moments[1]!.at).toBe('2026-12-30T09:00:00.000Z');
    // New Year's Day, then Saturday 2 January.
    expect(body.moments[3]).toMatchObject({
      at: '2027-01-02T09:00:00.000Z',
      skipped: [{ date: '2027-01-01', reason: 'holiday' }],
    });
  });

  it('respects not_before, and fails a job whose window never opens before not_after (reason deadline)', async () => {
    ctx.clock.set(MONDAY_10);
    const later = await create(w.agentId, {
      to_number: ctx.build.phone(),
      purpose: 'follow_up',
      not_before: '2026-12-01T07:00:00Z',
    }).expect(201);
    expect(later.body.next_attempt_at).toBe('2026-12-01T08:00:00.000Z');
    const late = await create(w.agentId, {
      to_number: ctx.build.phone(),
      purpose: 'follow_up',
      not_before: '2026-11-30T17:30:00Z',
      not_after: '2026-12-01T07:30:00Z',
    }).expect(201);
    expect(late.body).toMatchObject({ status: 'failed', failure_reason: 'deadline', next_attempt_at: null });
  });

  it('returns the existing job with 200 for the same external_id', async () => {
    ctx.clock.set(MONDAY_10);
    const body = { to_number: ctx.build.phone(), purpose: 'callback', external_id: 'crm-4711' };
    const first = await create(w.agentId, body).expect(201);
    const again = await create(w.agentId, { ...body, variables: { other: true } }).expect(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await ctx.db('outbound_jobs').where({ agent_id: w.agentId, external_id: 'crm-4711' })).toHaveLength(1);
  });

  it('requires consent for marketing (400 consent) and keeps the consent record for five years', async () => {
    ctx.clock.set(MONDAY_10);
    const to = ctx.build.phone();
    const refused = await create(w.agentId, { to_number: to, purpose: 'marketing' }).expect(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'consent' })]);
    expect(await ctx.db('outbound_jobs').where({ to_number: to })).toHaveLength(0);

    const consent = { basis: 'express_consent', obtained_at: '2026-11-01T12:00:00Z', source: 'Web form #12' };
    const res = await create(w.agentId, { to_number: to, purpose: 'marketing', consent }).expect(201);
    expect(res.body.consent).toEqual(consent);
    const [record] = await ctx.db('outbound_consents').where({ job_id: res.body.id });
    expect(record).toMatchObject({ basis: 'express_consent', source: 'Web form #12', phone_number: to });
    expect(new Date(record.keep_until).toISOString()).toBe('2031-11-30T09:00:00.000Z');
  });

  it('refuses bad input naming each field, storing nothing', async () => {
    const res = await create(w.agentId, {
      to_number: '12',
      purpose: 'spam',
      max_attempts: 11,
      retry_after_minutes: 4,
      variables: { big: 'x'.repeat(17_000) },
      window: { days: [1], from: '18:00', to: '09:00' },
    }).expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['max_attempts', 'purpose', 'retry_after_minutes', 'to_number', 'variables', 'window.to']);
  });
});

describe('list, get, cancel', () => {
  it('lists newest first with status filter and cursor paging; cancel is idempotent', async () => {
    ctx.clock.set(MONDAY_10);
    const agentId = await ctx.build.freshAgent(w.orgId);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(1000);
      ids.push((await create(agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201)).body.id);
    }
    const first = await ctx.http
      .get(`${base(agentId)}?limit=2`)
      .set('X-API-Key', w.key)
      .expect(200);
    const page = expectSchema(first, OutboundCallPageSchema);
    expect(page.data.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(page.pagination.total).toBe(3);
    const second = await ctx.http
      .get(`${base(agentId)}?limit=2&cursor=${page.pagination.next_cursor}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(second.body.data.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect(second.body.pagination.next_cursor).toBeNull();

    const cancelled = await ctx.http
      .post(`${base(agentId)}/${ids[0]}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', next_attempt_at: null });
    await ctx.http
      .post(`${base(agentId)}/${ids[0]}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    const filtered = await ctx.http
      .get(`${base(agentId)}?status=cancelled`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(filtered.body.data.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    const one = await ctx.http
      .get(`${base(agentId)}/${ids[1]}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(one.body.id).toBe(ids[1]);
    await ctx.http
      .get(`${base(w.agentId)}/${ids[1]}`)
      .set('X-API-Key', w.key)
      .expect(404);
    await ctx.http
      .get(`${base(agentId)}?status=nope`)
      .set('X-API-Key', w.key)
      .expect(400);
  });
});

describe('do-not-call list', () => {
  const dnc = () => `/v1/organization/${w.orgId}/do-not-call`;

  it('pages newest first by cursor, each entry once', async () => {
    const other = await ctx.build.world();
    const list = `/v1/organization/${other.orgId}/do-not-call`;
    const numbers: string[] = [];
    for (let i = 0; i < 3; i++) {
      ctx.clock.set(new Date(Date.parse(MONDAY_10) + i * 60_000).toISOString());
      const phone = ctx.build.phone();
      numbers.push(phone);
      await ctx.http.post(list).set('X-API-Key', other.key).send({ phone_number: phone }).expect(201);
    }
    const first = await ctx.http.get(`${list}?limit=2`).set('X-API-Key', other.key).expect(200);
    const second = await ctx.http
      .get(`${list}?limit=2&cursor=${first.body.pagination.next_cursor}`)
      .set('X-API-Key', other.key)
      .expect(200);
    expect(second.body.pagination.next_cursor).toBeNull();
    const seen = [...first.body.data, ...second.body.data].map((e: { phone_number: string }) => e.phone_number);
    expect(seen).toEqual([...numbers].reverse());
  });

  it('refuses a job for a listed number with 409 DO_NOT_CALL and blocks jobs created before', async () => {
    ctx.clock.set(MONDAY_10);
    const to = ctx.build.phone();
    const earlier = await create(w.agentId, { to_number: to, purpose: 'callback' }).expect(201);
    const added = await ctx.http
      .post(dnc())
      .set('X-API-Key', w.key)
      .send({ phone_number: to.replace('+49', '0'), reason: 'Asked by phone' })
      .expect(201);
    expect(expectSchema(added, DoNotCallEntrySchema)).toEqual({
      phone_number: to,
      reason: 'Asked by phone',
      source: 'api',
      created_at: MONDAY_10,
    });
    await ctx.http.post(dnc()).set('X-API-Key', w.key).send({ phone_number: to }).expect(200);
    const refused = await create(w.agentId, { to_number: to, purpose: 'callback' }).expect(409);
    expect(refused.body.error.code).toBe('DO_NOT_CALL');
    const job = await ctx.http
      .get(`${base(w.agentId)}/${earlier.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(job.body).toMatchObject({ status: 'blocked', next_attempt_at: null });

    const listed = await ctx.http.get(`${dnc()}?phone_number=${encodeURIComponent(to)}`).set('X-API-Key', w.key);
    expect(listed.body.data).toHaveLength(1);
    await ctx.http
      .delete(`${dnc()}?phone_number=${encodeURIComponent(to)}`)
      .set('X-API-Key', w.key)
      .expect(204);
    await ctx.http
      .delete(`${dnc()}?phone_number=${encodeURIComponent(to)}`)
      .set('X-API-Key', w.key)
      .expect(404);
    await create(w.agentId, { to_number: to, purpose: 'callback' }).expect(201);
  });

  it('adds the number of a call reported with opt_out: true', async () => {
    ctx.clock.set(MONDAY_10);
    const to = ctx.build.phone();
    await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({ call_id: `opt-${to}`, phone_number: to, duration: 30, opt_out: true })
      .expect(201);
    const [entry] = await ctx.db('do_not_call').where({ organization_id: w.orgId, phone_number: to });
    expect(entry).toMatchObject({ source: 'call_opt_out' });
    const refused = await create(w.agentId, { to_number: to, purpose: 'callback' }).expect(409);
    expect(refused.body.error.code).toBe('DO_NOT_CALL');
  });
});

describe('dispatch', () => {
  it('hands a due job out once with the agent’s number; answered completes it and reporting again is idempotent', async () => {
    ctx.clock.set(MONDAY_10);
    await quiet();
    const phone = ctx.build.phone();
    const agent = await ctx.build.agent(w.orgId, { phone_number: phone });
    await ctx.syncCaches();
    const job = await create(agent.id, {
      to_number: ctx.build.phone(),
      purpose: 'callback',
      variables: { topic: 'Heizung' },
    }).expect(201);
    const res = await claim({ max: 5, lease_seconds: 60 }).expect(200);
    const claimed = expectSchema(res, ClaimResponseSchema).data;
    expect(claimed).toEqual([
      {
        job_id: job.body.id,
        attempt_id: expect.any(String),
        agent_id: agent.id,
        campaign_id: null,
        to_number: job.body.to_number,
        from_number: phone,
        purpose: 'callback',
        variables: { topic: 'Heizung' },
        attempt_number: 1,
        lease_expires_at: '2026-11-30T09:01:00.000Z',
      },
    ]);
    const empty = await claim().expect(200);
    expect(empty.body.data).toEqual([]);

    // A time with microseconds (as now() writes one): the event, written by the database, shows it as the API does.
    await ctx.db('outbound_jobs').where({ id: job.body.id }).update({ created_at: '2026-11-30T08:59:59.123987Z' });
    const done = await report(claimed[0]!.attempt_id, { outcome: 'answered', call_id: 'c-1' }).expect(200);
    const body = expectSchema(done, AttemptResultResponseSchema);
    expect(body.job).toMatchObject({ status: 'completed', finished_at: MONDAY_10 });
    expect(body.attempt).toMatchObject({ outcome: 'answered', call_id: 'c-1', lease_expired: false });
    await report(claimed[0]!.attempt_id, { outcome: 'answered' }).expect(200);
    const conflict = await report(claimed[0]!.attempt_id, { outcome: 'busy' }).expect(409);
    expect(conflict.body.error.code).toBe('CONFLICT');
    const events = await ctx.db('events').where({ agent_id: agent.id, type: 'outbound_call.completed' });
    expect(events).toHaveLength(1);
    expect(events[0].payload.outbound_call.id).toBe(job.body.id);
    expect(events[0].payload.outbound_call.attempts).toEqual([body.attempt]);
    // The event carries the job exactly as the result answered it and as its GET shows it.
    const shown = await ctx.http
      .get(`${base(agent.id)}/${job.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(body.job.created_at).toBe('2026-11-30T08:59:59.123Z');
    expect(events[0].payload).toStrictEqual({ event: 'outbound_call.completed', outbound_call: body.job });
    expect(events[0].payload.outbound_call).toStrictEqual(shown.body);
    expect(await ctx.db('pgboss.job').whereRaw("data->>'eventId' = ?", [events[0].id])).toHaveLength(1);
    // Each accepted result is audited with the dialer's key (the 409 is not).
    const { key_prefix: prefix } = await ctx.db('api_keys').where({ id: w.keyId }).first('key_prefix');
    const audited = await ctx.db('audit_log').where({ resource_id: claimed[0]!.attempt_id });
    expect(audited.map((a) => [a.action, a.actor_key_prefix])).toEqual([
      ['outbound.attempts.result.create', prefix],
      ['outbound.attempts.result.create', prefix],
    ]);
    // Each claim too, the one that handed a job out and the empty one (its row is written before its locks).
    for (const answer of [res, empty]) {
      const rows = await ctx.db('audit_log').where({ request_id: answer.headers['x-request-id'] });
      expect(rows.map((a) => [a.method, a.route, a.actor_key_prefix])).toEqual([
        ['POST', '/v1/outbound/claim', prefix],
      ]);
    }
  });

  it('answered for a job cancelled while its call ran records the attempt and leaves the job (and the others in progress) as they are', async () => {
    ctx.clock.set(MONDAY_10);
    await quiet();
    const agentId = await ctx.build.freshAgent(w.orgId);
    const cancelled = await create(agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201);
    const running = await create(agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201);
    const claimed = (await claim({ max: 5 }).expect(200)).body.data as { job_id: string; attempt_id: string }[];
    expect(claimed.map((c) => c.job_id).sort()).toEqual([cancelled.body.id, running.body.id].sort());
    const attemptOf = (jobId: string) => claimed.find((c) => c.job_id === jobId)!.attempt_id;
    await ctx.http
      .post(`${base(agentId)}/${cancelled.body.id}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);

    const dispatchJobs = () => ctx.db('pgboss.job').where({ name: EVENT_DISPATCH_QUEUE }).count({ n: '*' }).first();
    const jobsBefore = await dispatchJobs();
    const late = await report(attemptOf(cancelled.body.id), { outcome: 'answered' }).expect(200);
    // No event, and no dispatch job for one.
    expect(await dispatchJobs()).toEqual(jobsBefore);
    expect(late.body.job).toMatchObject({ id: cancelled.body.id, status: 'cancelled' });
    expect(late.body.attempt).toMatchObject({ outcome: 'answered', lease_expired: false });
    const other = await ctx.http
      .get(`${base(agentId)}/${running.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(other.body).toMatchObject({ status: 'in_progress', finished_at: null });
    expect(await ctx.db('events').where({ agent_id: agentId })).toEqual([]);

    const done = await report(attemptOf(running.body.id), { outcome: 'answered' }).expect(200);
    expect(done.body.job).toMatchObject({ id: running.body.id, status: 'completed' });
    const events = await ctx.db('events').where({ agent_id: agentId });
    expect(events.map((e) => [e.type, e.payload.outbound_call.id])).toEqual([
      ['outbound_call.completed', running.body.id],
    ]);
  });

  it('schedules the next attempt after retry_after_minutes inside the window, and fails after max_attempts', async () => {
    ctx.clock.set('2026-11-30T16:30:00Z'); // 17:30 in Berlin
    await quiet();
    const job = await create(w.agentId, {
      to_number: ctx.build.phone(),
      purpose: 'callback',
      max_attempts: 2,
      retry_after_minutes: 60,
    }).expect(201);
    const [first] = (await claim().expect(200)).body.data;
    const retried = await report(first.attempt_id, { outcome: 'no_answer' }).expect(200);
    // 18:30 is after the window: the next morning at 09:00.
    expect(retried.body.job).toMatchObject({ status: 'scheduled', next_attempt_at: '2026-12-01T08:00:00.000Z' });
    ctx.clock.set('2026-12-01T08:00:00Z');
    const [second] = (await claim().expect(200)).body.data;
    expect(second).toMatchObject({ job_id: job.body.id, attempt_number: 2 });
    const failed = await report(second.attempt_id, { outcome: 'busy' }).expect(200);
    expect(failed.body.job).toMatchObject({ status: 'failed', failure_reason: 'max_attempts' });
    expect(failed.body.job.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['no_answer', 'busy']);
    expect(
      await ctx
        .db('events')
        .where({ type: 'outbound_call.failed' })
        .whereRaw("payload->'outbound_call'->>'id' = ?", [job.body.id]),
    ).toHaveLength(1);
  });

  it('counts an expired lease as a failed attempt', async () => {
    ctx.clock.set(MONDAY_10);
    await quiet();
    const job = await create(w.agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201);
    const [first] = (await claim({ lease_seconds: 30 }).expect(200)).body.data;
    ctx.clock.advance(31_000);
    expect((await claim().expect(200)).body.data).toEqual([]);
    const after = await ctx.http
      .get(`${base(w.agentId)}/${job.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(after.body).toMatchObject({ status: 'scheduled', next_attempt_at: '2026-11-30T10:00:31.000Z' });
    expect(after.body.attempts).toEqual([expect.objectContaining({ outcome: 'failed', lease_expired: true })]);
    const late = await report(first.attempt_id, { outcome: 'answered' }).expect(409);
    expect(late.body.error.message).toMatch(/lease/);
  });

  it('answers a result after the lease ran out with 409 and counts the attempt as failed, with no claim between', async () => {
    ctx.clock.set(MONDAY_10);
    await quiet();
    const job = await create(w.agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201);
    const [first] = (await claim({ lease_seconds: 30 }).expect(200)).body.data;
    ctx.clock.advance(31_000);
    const late = await report(first.attempt_id, { outcome: 'answered' }).expect(409);
    expect(late.body.error.message).toMatch(/lease/);
    const after = await ctx.http
      .get(`${base(w.agentId)}/${job.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(after.body).toMatchObject({ status: 'scheduled', next_attempt_at: '2026-11-30T10:00:31.000Z' });
    expect(after.body.attempts).toEqual([expect.objectContaining({ outcome: 'failed', lease_expired: true })]);
    await report(first.attempt_id, { outcome: 'failed' }).expect(409);
  });

  it('never hands out more than OUTBOUND_MAX_CONCURRENT_PER_AGENT jobs of one agent at once', async () => {
    ctx.clock.set(MONDAY_10);
    await quiet();
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (let i = 0; i < 5; i++)
      await create(agentId, { to_number: ctx.build.phone(), purpose: 'callback' }).expect(201);
    const first = (await claim({ max: 10 }).expect(200)).body.data;
    expect(first).toHaveLength(3);
    expect((await claim({ max: 10 }).expect(200)).body.data).toHaveLength(0);
    await report(first[0].attempt_id, { outcome: 'answered' }).expect(200);
    expect((await claim({ max: 10 }).expect(200)).body.data).toHaveLength(1);
  });

  it('refuses a claim to a key restricted to some agents, and without outbound:dispatch', async () => {
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    await ctx.http.post('/v1/outbound/claim').set('X-API-Key', scoped.key).send({}).expect(403);
    const writer = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['outbound:write'] });
    const res = await ctx.http.post('/v1/outbound/claim').set('X-API-Key', writer.key).send({}).expect(403);
    expect(res.body.error.message).toContain('outbound:dispatch');
    await claim({ max: 51 }).expect(400);
    await claim({ lease_seconds: 10 }).expect(400);
  });
});
