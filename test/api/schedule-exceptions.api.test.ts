import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';
import { AgentStatusSchema } from '../../src/modules/agents/agent.openapi.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const rules = [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }];
const patch = (id: string, body: unknown) =>
  ctx.http
    .patch(`/v1/agents/${id}`)
    .set('X-API-Key', w.key)
    .send(body as object);
const status = (id: string) => ctx.http.get(`/v1/agents/${id}/status`).set('X-API-Key', w.key);
const fields = (res: { body: { error: { details: { field: string }[] } } }) =>
  res.body.error.details.map((d) => d.field).sort();

describe('schedule exceptions through PATCH /v1/agents/{agentId} and GET .../status', () => {
  it('stores exceptions, and the status applies them before holidays and weekly rules', async () => {
    const id = (await ctx.build.agent(w.orgId, { bundesland: 'BY' })).id;
    const schedule = {
      timezone: 'Europe/Berlin',
      rules,
      exceptions: [
        { date: '2026-12-04', closed: true, note: 'Company party' },
        { date: '2026-12-24', rules: [{ start_time: '08:00', end_time: '12:00' }], note: 'Half day' },
        { date: '2026-12-25', rules: [{ start_time: '10:00', end_time: '14:00' }] },
        { from: '2026-12-28', to: '2026-12-30', closed: true, note: 'Bridge days' },
      ],
    };
    const res = await patch(id, { schedule });
    expect(res.status).toBe(200);
    expectSchema(res, AgentSchema);
    expect(res.body.schedule).toEqual(schedule);

    ctx.clock.set('2026-12-04T09:00:00Z'); // Friday 10:00, the party
    expect(expectSchema(await status(id).expect(200), AgentStatusSchema)).toMatchObject({
      is_within_schedule: false,
      reason: 'exception',
      exception: { date: '2026-12-04', closed: true, note: 'Company party' },
      accepting_calls: false,
      next_change_at: '2026-12-07T07:00:00.000Z',
    });
    ctx.clock.set('2026-12-24T10:00:00Z'); // Thursday 11:00, half day
    expect((await status(id)).body).toMatchObject({
      is_within_schedule: true,
      reason: 'exception',
      next_change_at: '2026-12-24T11:00:00.000Z',
    });
    ctx.clock.set('2026-12-25T10:00:00Z'); // Christmas Day 11:00: a holiday, opened by the exception
    expect((await status(id)).body).toMatchObject({ is_within_schedule: true, reason: 'exception', is_holiday: true });
    ctx.clock.set('2026-12-26T10:00:00Z'); // Boxing Day: the holiday decides
    expect(expectSchema(await status(id).expect(200), AgentStatusSchema)).toMatchObject({
      is_within_schedule: false,
      reason: 'holiday',
      exception: null,
    });
    ctx.clock.set('2026-12-25T14:00:00Z'); // after the Christmas hours: closed until after the bridge days
    expect((await status(id)).body.next_change_at).toBe('2026-12-31T07:00:00.000Z');
    ctx.clock.set('2026-12-31T09:00:00Z');
    expect((await status(id)).body).toMatchObject({ is_within_schedule: true, reason: 'schedule' });
  });

  it('refuses invalid exceptions with 400 naming each one, and keeps the old schedule', async () => {
    const id = (await ctx.build.agent(w.orgId, {})).id;
    const before = { timezone: 'Europe/Berlin', rules, exceptions: [{ date: '2026-12-04', closed: true }] };
    await patch(id, { schedule: before }).expect(200);
    const res = await patch(id, {
      schedule: {
        timezone: 'Europe/Berlin',
        rules,
        exceptions: [
          { date: '2026-02-30', closed: true },
          { date: '2026-12-01', closed: true, rules: [{ start_time: '08:00', end_time: '12:00' }] },
          { from: '2026-12-10', closed: true },
          { from: '2026-12-20', to: '2026-12-22', closed: true },
          { date: '2026-12-21', rules: [{ start_time: '25:00', end_time: '12:00' }] },
          { date: '2026-12-24', closed: false },
          { date: '2026-12-25', closed: true, colour: 'red' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([
      'schedule.exceptions[0].date',
      'schedule.exceptions[1].rules',
      'schedule.exceptions[2].to',
      'schedule.exceptions[4].rules[0].start_time',
      'schedule.exceptions[5].closed',
      'schedule.exceptions[6].colour',
    ]);
    const overlap = await patch(id, {
      schedule: {
        timezone: 'Europe/Berlin',
        rules,
        exceptions: [
          { from: '2026-12-20', to: '2026-12-22', closed: true },
          { date: '2026-12-21', closed: true },
        ],
      },
    });
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details).toEqual([
      { field: 'schedule.exceptions[1]', message: 'Overlaps exceptions[0]' },
    ]);
    const tooMany = Array.from({ length: 367 }, (_, i) => ({
      date: new Date(Date.UTC(2027, 0, 1) + i * 86_400_000).toISOString().slice(0, 10),
      closed: true,
    }));
    const many = await patch(id, { schedule: { timezone: 'Europe/Berlin', rules, exceptions: tooMany } });
    expect(many.status).toBe(400);
    expect(fields(many)).toEqual(['schedule.exceptions']);
    const stored = await ctx.db('agents').where({ id }).first('schedule');
    expect(stored.schedule).toEqual(before);
  });
});
