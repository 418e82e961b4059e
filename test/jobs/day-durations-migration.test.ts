import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as dayDurations from '../../migrations/20261130050000_count_call_durations_by_day.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Per agent, UTC day, done and trash: the calls' number and duration, from the day counters and from the calls. */
async function daySums() {
  const counters = await ctx.db.raw(
    `SELECT agent_id, day::text, done, deleted, calls::int, duration_total::float AS duration
       FROM call_day_counts WHERE calls <> 0 ORDER BY 1, 2, 3, 4`,
  );
  const calls = await ctx.db.raw(
    `SELECT agent_id, (created_at AT TIME ZONE 'UTC')::date::text AS day, done, deleted_at IS NOT NULL AS deleted,
            count(*)::int AS calls, sum(duration)::float AS duration
       FROM calls GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
  );
  return { counters: counters.rows, calls: calls.rows };
}

describe('migration 20261130050000 (durations in the day counters)', () => {
  it('fills the durations of existing days from the hour counters, and keeps them with later writes; down and up again', async () => {
    const world = await ctx.build.world();
    const post = async (callId: string, at: string, duration: number, done: boolean) => {
      ctx.clock.set(at);
      const res = await ctx.http
        .post(`/v1/agents/${world.agentId}/calls`)
        .set('X-API-Key', world.key)
        .send({ call_id: callId, duration, done })
        .expect(201);
      return res.body.id as string;
    };
    await post('before-1', '2026-05-03T23:30:00Z', 40, true);
    await post('before-2', '2026-05-04T00:10:00Z', 25, false);
    await ctx.db.transaction((trx) => dayDurations.down(trx));
    // Written while the counters had no durations: the migration must find them.
    await post('between', '2026-05-04T10:00:00Z', 70, false);
    await ctx.db.transaction((trx) => dayDurations.up(trx));
    let sums = await daySums();
    expect(sums.counters).toEqual(sums.calls);
    expect(sums.calls.reduce((t: number, r: { duration: number }) => t + r.duration, 0)).toBe(135);

    const later = await post('after', '2026-05-04T11:00:00Z', 15, false);
    await ctx.http
      .patch(`/v1/agents/${world.agentId}/calls/${later}`)
      .set('X-API-Key', world.key)
      .send({ done: true })
      .expect(200);
    sums = await daySums();
    expect(sums.counters).toEqual(sums.calls);
  });
});
