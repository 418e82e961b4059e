import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRepository } from '../../src/modules/calls/call.repository.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const FIELDS = [
  { name: 'urgency', type: 'enum', values: ['emergency', 'routine', 'info'] },
  { name: 'heating', type: 'boolean' },
];
const ZONES = ['Europe/Berlin', 'UTC', 'America/New_York', 'Asia/Kolkata'];
/** Ranges over both of Berlin's and New York's summer time changes, starting and ending mid-day. */
const RANGES = [
  ['2026-03-07T13:20:00Z', '2026-11-05T09:40:00Z', 'week'],
  ['2026-03-07T13:20:00Z', '2026-11-05T09:40:00Z', 'month'],
  ['2026-03-27T05:00:00Z', '2026-04-02T17:59:59Z', 'day'],
  ['2026-10-22T22:30:00Z', '2026-11-03T21:00:00Z', 'day'],
  ['2026-03-26', '2026-03-31', 'day'],
] as const;

/** A small deterministic generator, so a failure can be run again. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

describe('outcome counters per UTC day', () => {
  it('give statistics grouped by an outcome and outcome totals equal to counting the calls, in any zone', async () => {
    const world = await ctx.build.world();
    const { agentId, key } = world;
    const setFields = (fields: unknown) =>
      ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', key).send({ analysis_fields: fields }).expect(200);
    await setFields(FIELDS);
    const next = random(47);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    // Near the changes of summer time and around midnight in the four zones.
    const days = ['2026-03-07', '2026-03-08', '2026-03-28', '2026-03-29', '2026-03-30', '2026-04-02'];
    days.push('2026-10-24', '2026-10-25', '2026-10-26', '2026-11-01', '2026-11-02', '2026-11-05');
    const ids: string[] = [];
    for (let i = 0; i < 72; i++) {
      const hour = pick([0, 1, 2, 3, 4, 5, 9, 12, 13, 17, 18, 20, 21, 22, 23]);
      const at = `${pick(days)}T${String(hour).padStart(2, '0')}:${String(Math.floor(next() * 60)).padStart(2, '0')}:00Z`;
      const urgency = pick(['emergency', 'routine', 'info', undefined]);
      const extracted = { ...(urgency ? { urgency } : {}), ...(next() < 0.5 ? { heating: next() < 0.5 } : {}) };
      ctx.clock.set(at);
      const res = await ctx.http
        .post(`/v1/agents/${agentId}/calls`)
        .set('X-API-Key', key)
        .send({
          call_id: `days-${i}`,
          duration: 1 + Math.floor(next() * 90),
          extracted_data: extracted,
          done: i % 3 === 0,
        })
        .expect(201);
      ids.push(res.body.id as string);
    }
    // Concurrent intakes, which the server coalesces into fewer statements (src/db/statement-batches.ts).
    ctx.clock.set('2026-10-25T23:30:00Z');
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        ctx.http
          .post(`/v1/agents/${agentId}/calls`)
          .set('X-API-Key', key)
          .send({ call_id: `days-burst-${i}`, duration: 5 + i, extracted_data: { urgency: pick(['info', 'routine']) } })
          .expect(201),
      ),
    );
    // Trash, outcome values changed, done changed and a call deleted: update and delete triggers.
    await ctx
      .db('calls')
      .whereIn('id', ids.slice(0, 9))
      .update({ deleted_at: new Date('2026-11-10T00:00:00Z') });
    for (const id of ids.slice(9, 15))
      await ctx.http
        .patch(`/v1/agents/${agentId}/calls/${id}`)
        .set('X-API-Key', key)
        .send({ extracted_data: { urgency: 'info', heating: true } })
        .expect(200);
    await ctx.db('calls').whereIn('id', ids.slice(15, 20)).update({ done: true });
    await ctx.db('calls').where({ id: ids[20] }).delete();

    const path = `/v1/agents/${agentId}/calls/stats`;
    /** Calls of [from, to) counted per local bucket and urgency, with the filter `filter` as SQL. */
    const counted = async (body: { from: string; to: string }, interval: string, tz: string, where: string) =>
      (
        await ctx.db.raw(
          `SELECT date_trunc(?, created_at, ?) AS start, coalesce(extracted_data->>'urgency', 'none') AS value,
                  count(*)::int AS count, (count(*) FILTER (WHERE done))::int AS done, sum(duration)::float AS duration
             FROM calls WHERE agent_id = ? AND created_at >= ? AND created_at < ? ${where} GROUP BY 1, 2`,
          [interval, tz, agentId, body.from, body.to],
        )
      ).rows as { start: Date; value: string; count: number; done: number; duration: number }[];
    type Bucket = { start: string; count: number; done: number; duration_total: number; groups?: object };
    const checkAll = async (label: string) => {
      for (const tz of ZONES)
        for (const [from, to, interval] of RANGES)
          for (const [filter, where] of [
            ['', 'AND deleted_at IS NULL'],
            ['&done=true', 'AND deleted_at IS NULL AND done'],
            ['&done=false', 'AND deleted_at IS NULL AND NOT done'],
            ['&include_deleted=true', ''],
          ] as const) {
            const query = `from=${from}&to=${to}&interval=${interval}&tz=${tz}${filter}`;
            const name = `${label} ${query}`;
            const grouped = await ctx.http
              .get(`${path}?${query}&group_by=extracted.urgency`)
              .set('X-API-Key', key)
              .expect(200);
            const rows = await counted(grouped.body, interval, tz, where);
            const expected = new Map<string, Omit<Bucket, 'start'>>();
            for (const row of rows) {
              const bucket = expected.get(row.start.toISOString()) ?? {
                count: 0,
                done: 0,
                duration_total: 0,
                groups: {},
              };
              bucket.count += row.count;
              bucket.done += row.done;
              bucket.duration_total += row.duration;
              bucket.groups = { ...bucket.groups, [row.value]: row.count };
              expected.set(row.start.toISOString(), bucket);
            }
            const buckets = (grouped.body.buckets as Bucket[]).filter((b) => b.count > 0);
            expect(buckets.length, name).toBe(expected.size);
            for (const { start, count, done, duration_total, groups } of buckets)
              expect({ count, done, duration_total, groups }, `${name} ${start}`).toEqual(expected.get(start));

            // One value as a condition: statistics per bucket and the list's total.
            const value = pick(['emergency', 'routine', 'info']);
            const one = await ctx.http
              .get(`${path}?${query}&extracted.urgency=${value}`)
              .set('X-API-Key', key)
              .expect(200);
            const ofValue = rows.filter((r) => r.value === value);
            expect(
              (one.body.buckets as Bucket[]).filter((b) => b.count > 0).map((b) => [b.start, b.count, b.done]),
              `${name} =${value}`,
            ).toEqual(
              ofValue
                .sort((a, b) => a.start.getTime() - b.start.getTime())
                .map((r) => [r.start.toISOString(), r.count, r.done]),
            );
            const list = await ctx.http
              .get(
                `/v1/agents/${agentId}/calls?${query.replace(/&interval=\w+&tz=[^&]+/, '')}&extracted.urgency=${value}`,
              )
              .set('X-API-Key', key)
              .expect(200);
            expect(list.body.pagination.total, `${name} list =${value}`).toBe(ofValue.reduce((n, r) => n + r.count, 0));
          }
    };
    /** The day counters are the hour counters summed per UTC day. */
    const daysMatchHours = async () => {
      const sums = (table: string, day: string) =>
        ctx.db.raw(
          `SELECT name, value::text AS value, ${day} AS day, deleted, sum(calls)::int AS calls, sum(done_calls)::int AS done,
                  sum(duration_total)::float AS duration, sum(done_duration_total)::float AS done_duration
             FROM ${table} WHERE agent_id = ? GROUP BY 1, 2, 3, 4 HAVING sum(calls) <> 0 OR sum(duration_total) <> 0
            ORDER BY 1, 2, 3, 4`,
          [agentId],
        );
      const [days, hours] = await Promise.all([
        sums('call_outcome_day_stats', 'day'),
        sums('call_outcome_hour_stats', `(hour AT TIME ZONE 'UTC')::date`),
      ]);
      expect(days.rows.length).toBeGreaterThan(0);
      expect(days.rows).toEqual(hours.rows);
    };
    await daysMatchHours();
    await checkAll('after intake and changes');

    // A counted field dropped and added again: its day rows go and are rebuilt from the calls.
    await setFields([{ name: 'urgency', type: 'string' }, FIELDS[1]]);
    expect(
      await ctx.db('call_outcome_day_stats').where({ agent_id: agentId, name: 'urgency' }).first(),
    ).toBeUndefined();
    await setFields(FIELDS);
    await daysMatchHours();
    await checkAll('after a recount');
  }, 240_000);

  it('count the calls when a list finds the outcome no longer counted by the time its statement runs', async () => {
    const world = await ctx.build.world();
    const { agentId, orgId, key } = world;
    await ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', key).send({ analysis_fields: FIELDS }).expect(200);
    ctx.clock.set('2026-06-10T12:00:00Z');
    for (const [i, urgency] of ['info', 'routine', 'info', 'info'].entries())
      await ctx.http
        .post(`/v1/agents/${agentId}/calls`)
        .set('X-API-Key', key)
        .send({ call_id: `gone-${i}`, duration: 10, extracted_data: { urgency } })
        .expect(201);
    // The field stops being counted between the request reading the agent and its statement: the
    // list was made for the enum field, the database no longer keeps its counters.
    await ctx
      .db('agents')
      .where({ id: agentId })
      .update({ analysis_fields: JSON.stringify([{ name: 'urgency', type: 'string' }]) });
    expect(await ctx.db('call_outcome_day_stats').where({ agent_id: agentId }).first()).toBeUndefined();
    const filters = {
      include_deleted: false,
      extracted: [{ name: 'urgency', type: 'enum' as const, op: 'eq' as const, value: 'info' }],
    };
    for (const paging of [
      { page: 1, limit: 2 },
      { page: 2, limit: 2 },
      { cursor: null, limit: 2 },
    ]) {
      const listed = await new CallRepository(ctx.db).list({ id: agentId, organization_id: orgId }, filters, paging);
      expect(listed.pagination.total, JSON.stringify(paging)).toBe(3);
      expect(listed.data.length, JSON.stringify(paging)).toBe('page' in paging && paging.page === 2 ? 1 : 2);
    }
  });
});
