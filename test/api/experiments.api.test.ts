import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPERIMENT_END_QUEUE } from '../../src/jobs/queue-definitions.js';
import { ExperimentEndWorker } from '../../src/modules/experiments/experiment-end.worker.js';
import { ExperimentSchema } from '../../src/modules/experiments/experiment.schemas.js';
import { RouteAnswerSchema } from '../../src/modules/runtime/route.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  ctx.clock.set('2026-11-23T08:00:00Z');
});
afterAll(() => ctx.close());

const OPEN = '2026-11-23T10:00:00+01:00';
const schedule = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
  exceptions: [],
};

const http = () => ({
  post: (path: string, body: object = {}) => ctx.http.post(path).set('X-API-Key', w.key).send(body),
  get: (path: string) => ctx.http.get(path).set('X-API-Key', w.key),
});
const base = (agentId: string) => `/v1/agents/${agentId}/experiments`;

/** An agent open on weekdays, with versions: `closed` (inactive) and `open` (the current one). */
async function agentWithVersions() {
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis' });
  const patch = (body: object) => ctx.http.patch(`/v1/agents/${agent.id}`).set('X-API-Key', w.key).send(body);
  await patch({ schedule, greeting: 'Variante alt', is_active: false }).expect(200);
  await patch({ greeting: 'Variante neu', is_active: true }).expect(200);
  const versions = await ctx.db('agent_versions').where({ agent_id: agent.id }).orderBy('version');
  const number = (await ctx.db('agents').where({ id: agent.id }).first('phone_number')).phone_number as string;
  return { id: agent.id, closed: versions[0].id as string, open: versions[1].id as string, number };
}

const twoVariants = (a: { open: string }, extra: object = {}) => ({
  name: 'Begrüßung',
  variants: [
    { name: 'A', current: true, weight: 50 },
    { name: 'B', version_id: a.open, weight: 50 },
  ],
  ...extra,
});

describe('experiments', () => {
  it('creates a draft with its variants resolved to versions', async () => {
    const a = await agentWithVersions();
    const res = await http()
      .post(base(a.id), twoVariants(a, { sticky_by: 'caller_number', max_calls: 10 }))
      .expect(201);
    const experiment = expectSchema(res, ExperimentSchema);
    expect(experiment).toMatchObject({ status: 'draft', sticky_by: 'caller_number', max_calls: 10, calls: 0 });
    expect(experiment.variants).toEqual([
      { name: 'A', version_id: null, version: null, current: true, weight: 50 },
      { name: 'B', version_id: a.open, version: 2, current: false, weight: 50 },
    ]);
    const list = await http().get(base(a.id)).expect(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([experiment.id]);
  });

  it('refuses weights not summing to 100, a single variant, a foreign version and a past ends_at', async () => {
    const a = await agentWithVersions();
    const other = await agentWithVersions();
    const fields = async (body: object) =>
      ((await http().post(base(a.id), body).expect(400)).body.error.details as { field: string }[]).map((d) => d.field);
    expect(
      await fields({
        name: 'x',
        variants: [
          { name: 'A', current: true, weight: 50 },
          { name: 'B', current: true, weight: 40 },
        ],
      }),
    ).toContain('variants');
    expect(await fields({ name: 'x', variants: [{ name: 'A', current: true, weight: 100 }] })).toContain('variants');
    expect(await fields(twoVariants(other))).toContain('variants.1.version_id');
    expect(await fields(twoVariants(a, { ends_at: '2020-01-01T00:00:00Z' }))).toContain('ends_at');
    expect(await ctx.db('experiments').where({ agent_id: a.id })).toHaveLength(0);
  });

  it('refuses to start when a variant fails a test case, naming the variant and the case', async () => {
    const a = await agentWithVersions();
    const testCase = await http()
      .post(`/v1/agents/${a.id}/test-cases`, {
        name: 'Montag offen',
        input: { at: OPEN },
        expect: { accepting_calls: true },
      })
      .expect(201);
    const created = await http()
      .post(base(a.id), {
        name: 'Mit alter Version',
        variants: [
          { name: 'neu', current: true, weight: 60 },
          { name: 'alt', version_id: a.closed, weight: 40 },
        ],
      })
      .expect(201);
    const res = await http()
      .post(`${base(a.id)}/${created.body.id}/start`)
      .expect(409);
    expect(res.body.error.code).toBe('TEST_CASES_FAILED');
    expect(res.body.error.details).toEqual([
      expect.objectContaining({
        field: `variants.1.test_cases.${testCase.body.id}.expect.accepting_calls`,
        case_id: testCase.body.id,
        case_name: 'Montag offen',
      }),
    ]);
    expect(res.body.error.details[0].message).toContain('Variant "alt"');
    expect((await ctx.db('experiments').where({ id: created.body.id }).first()).status).toBe('draft');
  });

  it('runs one experiment per agent (409), routes calls to sticky variants and stops', async () => {
    const a = await agentWithVersions();
    const first = await http().post(base(a.id), twoVariants(a)).expect(201);
    const second = await http().post(base(a.id), twoVariants(a)).expect(201);
    const started = await http()
      .post(`${base(a.id)}/${first.body.id}/start`)
      .expect(200);
    expect(expectSchema(started, ExperimentSchema)).toMatchObject({
      status: 'running',
      started_at: expect.any(String),
    });
    expect(
      (
        await http()
          .post(`${base(a.id)}/${second.body.id}/start`)
          .expect(409)
      ).body.error.code,
    ).toBe('CONFLICT');

    const seen = new Map<string, number>();
    for (let i = 0; i < 20; i++) {
      const res = await http().post('/v1/runtime/route', { called_number: a.number, call_id: `exp-${i}`, at: OPEN });
      const answer = expectSchema(res, RouteAnswerSchema);
      expect(answer.experiment).toMatchObject({ id: first.body.id, name: 'Begrüßung' });
      seen.set(answer.experiment!.variant, (seen.get(answer.experiment!.variant) ?? 0) + 1);
      if (answer.experiment!.variant === 'B')
        expect(answer.configuration).toMatchObject({ version_id: a.open, version: 2 });
    }
    expect([...seen.keys()].sort()).toEqual(['A', 'B']);
    // The same call routed again keeps its variant and is not counted twice.
    const again = await http().post('/v1/runtime/route', { called_number: a.number, call_id: 'exp-0', at: OPEN });
    const stored = await ctx.db('experiment_assignments').where({ call_id: 'exp-0' }).first();
    expect(again.body.experiment.variant).toBe(stored.variant);
    expect(
      (
        await http()
          .get(`${base(a.id)}/${first.body.id}`)
          .expect(200)
      ).body.calls,
    ).toBe(20);

    const stopped = await http()
      .post(`${base(a.id)}/${first.body.id}/stop`)
      .expect(200);
    expect(stopped.body).toMatchObject({ status: 'stopped', end_reason: 'stopped' });
    await http()
      .post(`${base(a.id)}/${first.body.id}/stop`)
      .expect(409);
    const after = await http().post('/v1/runtime/route', { called_number: a.number, call_id: 'exp-after', at: OPEN });
    expect(after.body.experiment).toBeNull();
  });

  it('ends itself after max_calls and at ends_at', async () => {
    const a = await agentWithVersions();
    const limited = await http()
      .post(base(a.id), twoVariants(a, { max_calls: 3 }))
      .expect(201);
    await http()
      .post(`${base(a.id)}/${limited.body.id}/start`)
      .expect(200);
    const variants = [];
    for (let i = 0; i < 5; i++) {
      const res = await http().post('/v1/runtime/route', { called_number: a.number, call_id: `max-${i}`, at: OPEN });
      variants.push(res.body.experiment?.variant ?? null);
    }
    expect(variants.filter((v) => v !== null)).toHaveLength(3);
    expect(variants.slice(3)).toEqual([null, null]);
    expect(
      (
        await http()
          .get(`${base(a.id)}/${limited.body.id}`)
          .expect(200)
      ).body,
    ).toMatchObject({
      status: 'ended',
      end_reason: 'max_calls',
      calls: 3,
    });

    const dated = await http()
      .post(base(a.id), twoVariants(a, { ends_at: '2026-11-24T00:00:00Z' }))
      .expect(201);
    await http()
      .post(`${base(a.id)}/${dated.body.id}/start`)
      .expect(200);
    const before = await http().post('/v1/runtime/route', { called_number: a.number, call_id: 'dated-1', at: OPEN });
    expect(before.body.experiment).not.toBeNull();
    const late = await http().post('/v1/runtime/route', {
      called_number: a.number,
      call_id: 'dated-2',
      at: '2026-11-24T10:00:00+01:00',
    });
    expect(late.body.experiment).toBeNull();
    expect(
      (
        await http()
          .get(`${base(a.id)}/${dated.body.id}`)
          .expect(200)
      ).body,
    ).toMatchObject({
      status: 'ended',
      end_reason: 'ends_at',
    });
  });

  it('answers 404 for an experiment of another agent and needs agents:write to start', async () => {
    const a = await agentWithVersions();
    const b = await agentWithVersions();
    const created = await http().post(base(a.id), twoVariants(a)).expect(201);
    await http()
      .get(`${base(b.id)}/${created.body.id}`)
      .expect(404);
    const reader = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const res = await ctx.http
      .post(`${base(a.id)}/${created.body.id}/start`)
      .set('X-API-Key', reader.key)
      .expect(403);
    expect(res.body.error.message).toContain('agents:write');
  });
});

describe('the scheduled end pass', () => {
  const endedEvents = (experimentId: string) =>
    ctx.db('events').where({ type: 'experiment.ended' }).whereRaw("payload->'experiment'->>'id' = ?", [experimentId]);

  async function started(extra: object) {
    const a = await agentWithVersions();
    const created = await http().post(base(a.id), twoVariants(a, extra)).expect(201);
    await http()
      .post(`${base(a.id)}/${created.body.id}/start`)
      .expect(200);
    return created.body.id as string;
  }

  it('ends experiments past ends_at or at max_calls once, with one experiment.ended each, however many passes race', async () => {
    ctx.clock.set('2026-11-23T08:00:00Z');
    const dated = await started({ ends_at: '2026-11-23T12:00:00Z' });
    const full = await started({ max_calls: 2 });
    const later = await started({ ends_at: '2026-11-30T12:00:00Z', max_calls: 5 });
    // What a route answer leaves when its instance stops between assigning the last call and ending.
    await ctx.db('experiments').where({ id: full }).update({ calls: 2 });
    try {
      ctx.clock.set('2026-11-23T12:00:01Z');
      const ending = ctx.internals.experimentEnding;
      const passes = await Promise.all([ending.run(), ending.run(), ending.run()]);
      expect(passes.reduce((sum, n) => sum + n, 0)).toBe(2);
      expect(await ending.run()).toBe(0);

      const rows = await ctx.db('experiments').whereIn('id', [dated, full, later]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      expect(byId.get(dated)).toMatchObject({
        status: 'ended',
        end_reason: 'ends_at',
        ended_at: new Date('2026-11-23T12:00:00Z'),
      });
      expect(byId.get(full)).toMatchObject({
        status: 'ended',
        end_reason: 'max_calls',
        ended_at: new Date('2026-11-23T12:00:01Z'),
      });
      expect(byId.get(later)).toMatchObject({ status: 'running', end_reason: null });
      for (const id of [dated, full]) {
        const events = await endedEvents(id);
        expect(events).toHaveLength(1);
        expect(events[0].payload.experiment).toMatchObject({ id, status: 'ended' });
      }
      expect(await endedEvents(later)).toHaveLength(0);
    } finally {
      ctx.clock.set('2026-11-23T08:00:00Z');
    }
  });

  it('is scheduled every minute through the job queue and runs the pass when its job is taken', async () => {
    const worker = new ExperimentEndWorker(ctx.queue, ctx.internals.experimentEnding);
    await worker.start();
    const schedules = await ctx.queue.boss.getSchedules();
    expect(schedules.map((s) => [s.name, s.cron])).toContainEqual([EXPERIMENT_END_QUEUE, '* * * * *']);
    await worker.stop();

    const id = await started({ ends_at: '2026-11-23T09:00:00Z' });
    try {
      ctx.clock.set('2026-11-23T09:30:00Z');
      await ctx.queue.send(EXPERIMENT_END_QUEUE, {});
      const ran = await ctx.queue.runPending(EXPERIMENT_END_QUEUE, async () => {
        await worker.run();
      });
      expect(ran).toBe(1);
      expect((await ctx.db('experiments').where({ id }).first()).status).toBe('ended');
      expect(await endedEvents(id)).toHaveLength(1);
    } finally {
      ctx.clock.set('2026-11-23T08:00:00Z');
    }
  });
});
