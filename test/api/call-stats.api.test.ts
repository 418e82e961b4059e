import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { repoRoot } from '../support/server-process.js';
import { CallStatsSchema } from '../../src/modules/calls/call-stats.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const FIELDS = [
  { name: 'urgency', type: 'enum', values: ['emergency', 'routine'] },
  { name: 'heating_issue', type: 'boolean' },
  { name: 'units', type: 'number' },
];
let sequence = 0;

async function agentWithFields(world: World): Promise<string> {
  const agentId = await ctx.build.freshAgent(world.orgId);
  await ctx.http
    .patch(`/v1/agents/${agentId}`)
    .set('X-API-Key', world.key)
    .send({ analysis_fields: FIELDS })
    .expect(200);
  return agentId;
}

/** Reports a call as if it ended at `at`. */
async function callAt(agentId: string, at: string, fields: Record<string, unknown> = {}, key = w.key) {
  ctx.clock.set(at);
  sequence += 1;
  const res = await ctx.http
    .post(`/v1/agents/${agentId}/calls`)
    .set('X-API-Key', key)
    .send({ call_id: `stats-${sequence}`, duration: 60, ...fields });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function stats(path: string, query: string, key = w.key) {
  const res = await ctx.http.get(`${path}?${query}`).set('X-API-Key', key).expect(200);
  expectSchema(res, CallStatsSchema);
  return res.body;
}

async function listTotal(agentId: string, query: string): Promise<number> {
  const res = await ctx.http.get(`/v1/agents/${agentId}/calls?${query}`).set('X-API-Key', w.key).expect(200);
  return res.body.pagination.total;
}

const counts = (body: { buckets: { count: number }[] }) => body.buckets.map((b) => b.count);

describe('GET /v1/agents/{agentId}/calls/stats', () => {
  let agentId: string;
  beforeAll(async () => {
    agentId = await agentWithFields(w);
    // Berlin is UTC+1 in March before the 29th.
    await callAt(agentId, '2026-03-01T22:30:00Z', { extracted_data: { urgency: 'emergency' }, duration: 30 }); // Mar 1, 23:30
    await callAt(agentId, '2026-03-01T23:30:00Z', { extracted_data: { urgency: 'routine' }, duration: 90, done: true }); // Mar 2
    await callAt(agentId, '2026-03-02T10:00:00Z', { extracted_data: { urgency: 'emergency', heating_issue: true } });
    await callAt(agentId, '2026-03-04T10:00:00Z', { extracted_data: { heating_issue: false } }); // Mar 4
    await callAt(agentId, '2026-03-20T10:00:00Z', { duration: 120 }); // outside most ranges
  });
  const path = () => `/v1/agents/${agentId}/calls/stats`;
  const range = 'from=2026-03-01T00:00:00%2B01:00&to=2026-03-04T23:59:59.999%2B01:00';

  it('counts per local day in the time zone, empty days included, totals equal to the sum and to the list', async () => {
    const body = await stats(path(), `${range}&interval=day&tz=Europe/Berlin`);
    expect(body).toMatchObject({
      interval: 'day',
      tz: 'Europe/Berlin',
      from: '2026-02-28T23:00:00.000Z',
      to: '2026-03-04T23:00:00.000Z',
      group_by: null,
    });
    expect(body.buckets.map((b: { start: string }) => b.start)).toEqual([
      '2026-02-28T23:00:00.000Z',
      '2026-03-01T23:00:00.000Z',
      '2026-03-02T23:00:00.000Z',
      '2026-03-03T23:00:00.000Z',
    ]);
    expect(counts(body)).toEqual([1, 2, 0, 1]);
    expect(body.buckets[1]).toMatchObject({ count: 2, done: 1, duration_total: 150, duration_avg: 75 });
    expect(body.buckets[2]).toMatchObject({ count: 0, done: 0, duration_total: 0, duration_avg: null });
    expect(body.totals).toEqual({ count: 4, done: 1, duration_total: 240, duration_avg: 60 });
    expect(await listTotal(agentId, range)).toBe(4);
  });

  it('puts the same calls into UTC days differently', async () => {
    const body = await stats(path(), 'from=2026-03-01&to=2026-03-04&interval=day&tz=UTC');
    expect(counts(body)).toEqual([2, 1, 0, 1]);
    expect(body.totals.count).toBe(await listTotal(agentId, 'from=2026-03-01&to=2026-03-04'));
  });

  it("defaults tz to the agent's schedule time zone", async () => {
    await ctx.http
      .patch(`/v1/agents/${agentId}`)
      .set('X-API-Key', w.key)
      .send({ schedule: { timezone: 'Europe/Berlin', rules: [] } })
      .expect(200);
    const body = await stats(path(), `${range}&interval=day`);
    expect(body.tz).toBe('Europe/Berlin');
    expect(counts(body)).toEqual([1, 2, 0, 1]);
  });

  it('takes the list filters, extracted ones included, and the totals still match the list', async () => {
    for (const filter of ['done=false', 'extracted.urgency=emergency', 'extracted.heating_issue=true&done=false']) {
      const body = await stats(path(), `${range}&tz=Europe/Berlin&${filter}`);
      const sum = counts(body).reduce((a, b) => a + b, 0);
      expect(sum).toBe(body.totals.count);
      expect(body.totals.count).toBe(await listTotal(agentId, `${range}&${filter}`));
    }
  });

  it('groups by done, by an enum field and by a boolean field', async () => {
    const byUrgency = await stats(path(), `${range}&tz=Europe/Berlin&group_by=extracted.urgency`);
    expect(byUrgency.buckets.map((b: { groups: unknown }) => b.groups)).toEqual([
      { emergency: 1 },
      { routine: 1, emergency: 1 },
      {},
      { none: 1 },
    ]);
    const byDone = await stats(path(), `${range}&tz=Europe/Berlin&group_by=done`);
    expect(byDone.buckets[1].groups).toEqual({ true: 1, false: 1 });
    const byHeating = await stats(path(), `${range}&tz=Europe/Berlin&group_by=extracted.heating_issue`);
    expect(byHeating.buckets[3].groups).toEqual({ false: 1 });
  });

  it('has 23 hour buckets on the day summer time starts, and weeks and months in local time', async () => {
    const hours = await stats(
      path(),
      'from=2026-03-28T23:00:00Z&to=2026-03-29T21:59:59Z&interval=hour&tz=Europe/Berlin',
    );
    expect(hours.buckets).toHaveLength(23);
    const weeks = await stats(path(), 'from=2026-03-01&to=2026-03-31&interval=week&tz=UTC');
    expect(weeks.buckets[0].start).toBe('2026-02-23T00:00:00.000Z');
    expect(counts(weeks)).toEqual([2, 2, 0, 1, 0, 0]);
    const months = await stats(
      path(),
      'from=2026-01-01T00:00:00%2B01:00&to=2026-04-30T23:59:59%2B02:00&interval=month&tz=Europe/Berlin',
    );
    expect(months.buckets.map((b: { start: string }) => b.start)).toEqual([
      '2025-12-31T23:00:00.000Z',
      '2026-01-31T23:00:00.000Z',
      '2026-02-28T23:00:00.000Z',
      '2026-03-31T22:00:00.000Z',
    ]);
    expect(months.totals.count).toBe(5);
  });

  it('refuses a missing range, a bad zone, interval or group_by, and too many buckets', async () => {
    const res = await ctx.http
      .get(`${path()}?tz=Mars/Olympus&interval=minute&group_by=extracted.units`)
      .set('X-API-Key', w.key)
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['from', 'interval', 'to', 'tz']);
    const group = await ctx.http.get(`${path()}?${range}&group_by=extracted.units`).set('X-API-Key', w.key).expect(400);
    expect(group.body.error.details[0].field).toBe('group_by');
    const agentGroup = await ctx.http.get(`${path()}?${range}&group_by=agent`).set('X-API-Key', w.key).expect(400);
    expect(agentGroup.body.error.details[0].field).toBe('group_by');
    const many = await ctx.http
      .get(`${path()}?from=2020-01-01&to=2026-01-01&interval=hour`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(many.body.error.details[0].field).toBe('interval');
    const unknown = await ctx.http.get(`${path()}?${range}&extracted.colour=red`).set('X-API-Key', w.key).expect(400);
    expect(unknown.body.error.details[0].field).toBe('extracted.colour');
  });

  it('is 403 without calls:read, 403 out of scope and 404 for an agent of another organization', async () => {
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:write'] });
    await ctx.http.get(`${path()}?${range}`).set('X-API-Key', noRead.key).expect(403);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    const out = await ctx.http.get(`${path()}?${range}`).set('X-API-Key', scoped.key).expect(403);
    expect(out.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    const other = await ctx.build.world();
    await ctx.http.get(`${path()}?${range}`).set('X-API-Key', other.key).expect(404);
  });
});

describe('GET /v1/organization/{orgId}/calls/stats', () => {
  it('counts every readable agent of the organization, groups by agent, and honours the key scope', async () => {
    const world = await ctx.build.world();
    const second = await ctx.build.freshAgent(world.orgId);
    await callAt(world.agentId, '2026-05-01T10:00:00Z', {}, world.key);
    await callAt(world.agentId, '2026-05-02T10:00:00Z', { done: true }, world.key);
    await callAt(second, '2026-05-02T11:00:00Z', {}, world.key);
    const path = `/v1/organization/${world.orgId}/calls/stats`;
    const query = 'from=2026-05-01&to=2026-05-03&group_by=agent';
    const all = await stats(path, query, world.key);
    expect(all.tz).toBe('UTC');
    expect(counts(all)).toEqual([1, 2, 0]);
    expect(all.buckets[1].groups).toEqual({ [world.agentId]: 1, [second]: 1 });
    expect(all.totals).toMatchObject({ count: 3, done: 1 });

    const scoped = await ctx.build.apiKey(world.orgId, world.userId, { allowedAgentIds: [second] });
    const some = await stats(path, query, scoped.key);
    expect(some.totals.count).toBe(1);

    const byDone = await stats(path, 'from=2026-05-01&to=2026-05-03&done=true', world.key);
    expect(byDone.totals.count).toBe(1);
  });

  it('is 404 for another organization, 403 without calls:read, 400 for outcome filters', async () => {
    const world = await ctx.build.world();
    const path = `/v1/organization/${world.orgId}/calls/stats`;
    await ctx.http.get(`${path}?from=2026-05-01&to=2026-05-03`).set('X-API-Key', w.key).expect(404);
    const noRead = await ctx.build.apiKey(world.orgId, world.userId, { permissions: ['agents:read'] });
    await ctx.http.get(`${path}?from=2026-05-01&to=2026-05-03`).set('X-API-Key', noRead.key).expect(403);
    const res = await ctx.http
      .get(`${path}?from=2026-05-01&to=2026-05-03&extracted.urgency=emergency&group_by=extracted.urgency`)
      .set('X-API-Key', world.key)
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['extracted.urgency']);
  });
});

describe('statistics from the hourly counters', () => {
  const hourStats = (agentId: string) =>
    ctx
      .db('call_hour_stats')
      .where({ agent_id: agentId })
      .select(ctx.db.raw('sum(calls)::int AS calls'), ctx.db.raw('sum(duration_total)::float AS duration'))
      .first();
  const callStats = (agentId: string) =>
    ctx
      .db('calls')
      .where({ agent_id: agentId })
      .select(ctx.db.raw('count(*)::int AS calls'), ctx.db.raw('sum(duration)::float AS duration'))
      .first();

  it('keep step with intake, done, trash and deletion, and answer as the calls do', async () => {
    const world = await ctx.build.world();
    await ctx.http
      .patch(`/v1/organization/${world.orgId}`)
      .set('X-API-Key', world.key)
      .send({ auto_delete_done_calls: true })
      .expect(200);
    const agentId = world.agentId;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(await callAt(agentId, `2026-04-0${1 + i}T0${i}:15:00Z`, { duration: 10 * (i + 1) }, world.key));
    await ctx.http
      .patch(`/v1/agents/${agentId}/calls/${ids[0]}`)
      .set('X-API-Key', world.key)
      .send({ done: true })
      .expect(200);
    await ctx.db('calls').where({ id: ids[1] }).delete();
    expect(await hourStats(agentId)).toEqual(await callStats(agentId));

    const path = `/v1/agents/${agentId}/calls/stats`;
    // Whole hours in Berlin: counters; the partial hour at the start from the calls themselves.
    for (const [query, total] of [
      ['from=2026-04-01&to=2026-04-06&tz=Europe/Berlin', 4],
      ['from=2026-04-01&to=2026-04-06&tz=Europe/Berlin&include_deleted=true', 5],
      ['from=2026-04-01T00:30:00Z&to=2026-04-06&tz=Europe/Berlin&include_deleted=true', 4],
      ['from=2026-04-01&to=2026-04-06&tz=Asia/Kolkata&include_deleted=true', 5],
      ['from=2026-04-01&to=2026-04-06&tz=Europe/Berlin&done=true&include_deleted=true', 1],
    ] as const) {
      const body = await stats(path, query, world.key);
      expect(body.totals.count).toBe(total);
      expect(counts(body).reduce((a, b) => a + b, 0)).toBe(total);
      const list = await ctx.http
        .get(`/v1/agents/${agentId}/calls?${query.replace(/&tz=[^&]+/, '')}`)
        .set('X-API-Key', world.key)
        .expect(200);
      expect(list.body.pagination.total).toBe(total);
    }
    const kolkata = await stats(path, 'from=2026-04-01&to=2026-04-06&tz=Asia/Kolkata&include_deleted=true', world.key);
    expect(kolkata.buckets[0].start).toBe('2026-03-31T18:30:00.000Z');
    const byDone = await stats(path, 'from=2026-04-01&to=2026-04-06&group_by=done&include_deleted=true', world.key);
    expect(byDone.totals).toMatchObject({ count: 5, done: 1, duration_total: 10 + 30 + 40 + 50 + 60 });
    expect(byDone.buckets[0].groups).toEqual({ true: 1 });
  });
});

describe('statistics and totals from the outcome counters', () => {
  const OUTCOME_FIELDS = [
    { name: 'urgency', type: 'enum', values: ['emergency', 'routine', 'info'] },
    { name: 'heating', type: 'boolean' },
    { name: 'units', type: 'number' },
    { name: 'topic', type: 'string' },
  ];
  /** A new world whose agent has OUTCOME_FIELDS. */
  const worldWithOutcomeFields = async () => {
    const world = await ctx.build.world();
    await ctx.http
      .patch(`/v1/agents/${world.agentId}`)
      .set('X-API-Key', world.key)
      .send({ analysis_fields: OUTCOME_FIELDS })
      .expect(200);
    return world;
  };
  /** Sums of the counters per field, stored value, UTC hour and trash state (rows of only zeros left out). */
  const fromCounters = async (agentId: string) =>
    (
      await ctx.db.raw(
        `SELECT name, value::text AS value, hour, deleted, sum(calls)::int AS calls, sum(done_calls)::int AS done,
                sum(duration_total)::float AS duration, sum(done_duration_total)::float AS done_duration
           FROM call_outcome_hour_stats WHERE agent_id = ?
          GROUP BY 1, 2, 3, 4
         HAVING sum(calls) <> 0 OR sum(done_calls) <> 0 OR sum(duration_total) <> 0 OR sum(done_duration_total) <> 0
          ORDER BY 1, 2, 3, 4`,
        [agentId],
      )
    ).rows;
  /** The same counted from the calls, for the fields that are enum or boolean now. */
  const fromCalls = async (agentId: string) =>
    (
      await ctx.db.raw(
        `SELECT k.name, (c.extracted_data -> k.name)::text AS value, date_trunc('hour', c.created_at, 'UTC') AS hour,
                c.deleted_at IS NOT NULL AS deleted, count(*)::int AS calls, (count(*) FILTER (WHERE c.done))::int AS done,
                sum(c.duration)::float AS duration, coalesce(sum(c.duration) FILTER (WHERE c.done), 0)::float AS done_duration
           FROM calls c JOIN agents a ON a.id = c.agent_id,
                jsonb_array_elements(a.analysis_fields) f, LATERAL (SELECT f->>'name' AS name) k
          WHERE c.agent_id = ? AND f->>'type' IN ('enum', 'boolean') AND c.extracted_data \\? k.name
          GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
        [agentId],
      )
    ).rows;

  it('equal a direct count through intake, PATCH, done, trash, restore, delete, purge, erasure and field changes', async () => {
    const world = await ctx.build.world();
    await ctx.http
      .patch(`/v1/organization/${world.orgId}`)
      .set('X-API-Key', world.key)
      .send({ auto_delete_done_calls: true })
      .expect(200);
    const agentId = world.agentId;
    const setFields = (fields: unknown) =>
      ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', world.key).send({ analysis_fields: fields }).expect(200);
    await setFields(OUTCOME_FIELDS);
    const expectExact = async () => expect(await fromCounters(agentId)).toEqual(await fromCalls(agentId));

    const outcomes = [
      { urgency: 'emergency', heating: true, units: 2, topic: 'Heizung' },
      { urgency: 'routine', heating: false, units: 1 },
      { urgency: 'emergency' },
      { heating: true, topic: 'Wasser' },
      { urgency: 'info', heating: false },
      { urgency: 'emergency', heating: false, units: 2 },
    ];
    const ids: string[] = [];
    for (const [i, extracted] of outcomes.entries()) {
      ids.push(
        await callAt(
          agentId,
          `2026-06-0${1 + (i % 3)}T${10 + i}:${String(i * 7).padStart(2, '0')}:00Z`,
          { extracted_data: extracted, duration: 10 * (i + 1) + 0.5, phone_number: `+49301234${i}`, done: i === 5 },
          world.key,
        ),
      );
    }
    await expectExact();

    const patch = (id: string, body: object) =>
      ctx.http.patch(`/v1/agents/${agentId}/calls/${id}`).set('X-API-Key', world.key).send(body).expect(200);
    await patch(ids[0]!, { extracted_data: { urgency: 'routine', heating: false } });
    await expectExact();
    await patch(ids[1]!, { done: true }); // done, and to the trash
    await expectExact();
    await ctx.db('calls').where({ id: ids[1] }).update({ deleted_at: null }); // restored
    await expectExact();
    await ctx.db('calls').where({ id: ids[2] }).delete();
    await expectExact();

    // Retention purge (the free text goes, typed outcomes stay) and a data subject's erasure.
    await ctx.db('agents').where({ id: agentId }).update({ retention_days: 1 });
    ctx.clock.set('2026-06-10T00:00:00Z');
    expect(await ctx.internals.callRetention.run()).toBeGreaterThan(0);
    await expectExact();
    await ctx.http
      .post(`/v1/organization/${world.orgId}/data-subjects/erase`)
      .set('X-API-Key', world.key)
      .send({ phone_number: '+493012344' })
      .expect(200);
    await expectExact();

    // Field changes: a counted field that becomes free text loses its counters, and is counted
    // again from the stored values when it is an enum once more; a number field that becomes an
    // enum is counted from its stored numbers; boolean to enum keeps the stored values' counters.
    await setFields(OUTCOME_FIELDS.map((f) => (f.name === 'urgency' ? { name: 'urgency', type: 'string' } : f)));
    await expectExact();
    expect(
      await ctx.db('call_outcome_hour_stats').where({ agent_id: agentId, name: 'urgency' }).first(),
    ).toBeUndefined();
    await setFields([
      { name: 'urgency', type: 'enum', values: ['emergency', 'routine'] },
      { name: 'heating', type: 'enum', values: ['yes', 'no'] },
      { name: 'units', type: 'enum', values: ['1', '2'] },
      { name: 'topic', type: 'string' },
    ]);
    await expectExact();
    await callAt(agentId, '2026-06-02T10:30:00Z', { extracted_data: { heating: 'yes', units: '2' } }, world.key);
    await expectExact();
    await setFields(OUTCOME_FIELDS);
    await expectExact();
  });

  it('answer list totals and statistics as counting the calls does', async () => {
    const world = await worldWithOutcomeFields();
    const agentId = world.agentId;
    const values = ['emergency', 'routine', 'info', undefined];
    for (let i = 0; i < 24; i++) {
      const urgency = values[i % 4];
      await callAt(
        agentId,
        `2026-07-${String(1 + (i % 5)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${i % 2 ? 45 : '05'}:00Z`,
        {
          extracted_data: { ...(urgency ? { urgency } : {}), heating: i % 3 === 0 },
          done: i % 5 === 0,
          duration: i + 1,
        },
        world.key,
      );
    }
    const rowCount = async (condition: object, extra = '') =>
      Number(
        (await ctx
          .db('calls')
          .where({ agent_id: agentId })
          .whereNull('deleted_at')
          .whereRaw(`extracted_data @> ?::jsonb ${extra}`, [JSON.stringify(condition)])
          .count({ n: '*' })
          .first())!.n,
      );
    const total = async (query: string) =>
      (await ctx.http.get(`/v1/agents/${agentId}/calls?${query}`).set('X-API-Key', world.key).expect(200)).body
        .pagination.total as number;
    expect(await total('extracted.urgency=emergency')).toBe(await rowCount({ urgency: 'emergency' }));
    expect(await total('extracted.heating=true&done=false')).toBe(await rowCount({ heating: true }, 'AND NOT done'));
    expect(await total('extracted.urgency=info&done=true')).toBe(await rowCount({ urgency: 'info' }, 'AND done'));
    // Partial hours at both edges.
    expect(await total('extracted.urgency=routine&from=2026-07-02T01:30:00Z&to=2026-07-04T13:20:00Z')).toBe(
      await rowCount(
        { urgency: 'routine' },
        `AND created_at >= '2026-07-02T01:30:00Z' AND created_at <= '2026-07-04T13:20:00Z'`,
      ),
    );

    // Counters (UTC, whole hours) against counting the calls (a zone whose offset is not whole hours).
    const path = `/v1/agents/${agentId}/calls/stats`;
    const range = 'from=2026-06-15&to=2026-07-20&interval=month';
    const summed = (body: { totals: object; buckets: { groups?: Record<string, number> }[] }) => {
      const groups: Record<string, number> = {};
      for (const b of body.buckets)
        for (const [k, v] of Object.entries(b.groups ?? {})) groups[k] = (groups[k] ?? 0) + v;
      return { totals: body.totals, groups };
    };
    for (const query of [
      'group_by=extracted.urgency',
      'group_by=extracted.heating&done=true',
      'extracted.urgency=emergency',
      'extracted.urgency=emergency&group_by=done',
      'extracted.heating=false&done=false&group_by=extracted.heating',
      'extracted.urgency=routine&group_by=done&done=true',
    ]) {
      const counters = await stats(path, `${range}&tz=UTC&${query}`, world.key);
      const rows = await stats(path, `${range}&tz=Asia/Kolkata&${query}`, world.key);
      expect(summed(counters), query).toEqual(summed(rows));
    }
    const grouped = await stats(path, `${range}&tz=UTC&group_by=extracted.urgency`, world.key);
    expect(summed(grouped).groups).toEqual({ emergency: 6, routine: 6, info: 6, none: 6 });
  });

  it('grouped by an outcome, give each local day what counting its calls gives', async () => {
    const world = await worldWithOutcomeFields();
    const agentId = world.agentId;
    const values = ['emergency', 'routine', 'info', undefined, 'emergency'];
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      // Around midnight in Berlin (22:00 and 23:00 UTC in summer), so each UTC day feeds two local days.
      const urgency = values[i % 5];
      ids.push(
        await callAt(
          agentId,
          `2026-07-${String(1 + (i % 4)).padStart(2, '0')}T${20 + (i % 4)}:${i % 2 ? 40 : 10}:00Z`,
          { extracted_data: urgency ? { urgency } : { heating: true }, done: i % 3 === 0, duration: i + 0.5 },
          world.key,
        ),
      );
    }
    await ctx
      .db('calls')
      .whereIn('id', ids.slice(0, 4))
      .update({ deleted_at: new Date('2026-07-10T00:00:00Z') });
    const path = `/v1/agents/${agentId}/calls/stats`;
    for (const filter of ['', '&done=true', '&done=false', '&include_deleted=true']) {
      const body = await stats(
        path,
        `from=2026-06-30&to=2026-07-05&interval=day&tz=Europe/Berlin&group_by=extracted.urgency${filter}`,
        world.key,
      );
      const { rows } = await ctx.db.raw(
        `SELECT date_trunc('day', created_at, 'Europe/Berlin') AS start, coalesce(extracted_data->>'urgency', 'none') AS value,
                count(*)::int AS count, (count(*) FILTER (WHERE done))::int AS done, sum(duration)::float AS duration
           FROM calls WHERE agent_id = ? AND created_at >= '2026-06-30T00:00:00Z' AND created_at < '2026-07-06T00:00:00Z'
            ${filter.includes('include_deleted') ? '' : 'AND deleted_at IS NULL'}
            ${filter.includes('done=true') ? 'AND done' : filter.includes('done=false') ? 'AND NOT done' : ''}
          GROUP BY 1, 2`,
        [agentId],
      );
      const expected = new Map<string, { count: number; done: number; duration_total: number; groups: object }>();
      for (const row of rows as { start: Date; value: string; count: number; done: number; duration: number }[]) {
        const day = expected.get(row.start.toISOString()) ?? { count: 0, done: 0, duration_total: 0, groups: {} };
        day.count += row.count;
        day.done += row.done;
        day.duration_total += row.duration;
        day.groups = { ...day.groups, [row.value]: row.count };
        expected.set(row.start.toISOString(), day);
      }
      const days = (
        body.buckets as { start: string; count: number; done: number; duration_total: number; groups: object }[]
      ).filter((b) => b.count > 0);
      expect(days.length, filter).toBe(expected.size);
      for (const { start, count, done, duration_total, groups } of days)
        expect({ count, done, duration_total, groups }, `${filter} ${start}`).toEqual(expected.get(start));
    }
  });
});

describe('docs/calls.md', () => {
  it("shows the statistics example's from and to as the server answers that very request", async () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/calls.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Statistics'));
    const query = /GET \/v1\/agents\/\{agentId\}\/calls\/stats(\?\S+)/.exec(section)![1]!;
    const shown = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as Record<string, unknown>;
    const agentId = await agentWithFields(w);
    const res = await ctx.http.get(`/v1/agents/${agentId}/calls/stats${query}`).set('X-API-Key', w.key).expect(200);
    expect({ from: res.body.from, to: res.body.to, interval: res.body.interval, tz: res.body.tz }).toEqual({
      from: shown.from,
      to: shown.to,
      interval: shown.interval,
      tz: shown.tz,
    });
    expect(res.body.buckets[0].start).toBe((shown.buckets as { start: string }[])[0]!.start);
    expect(res.body.buckets).toHaveLength(31);
  });
});
