import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentStatusSchema } from '../../src/modules/agents/agent.openapi.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const weekdays = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
};
const status = (id: string, key = w.key) => ctx.http.get(`/v1/agents/${id}/status`).set('X-API-Key', key);
const agent = async (fields: Record<string, unknown> = {}) =>
  (await ctx.build.agent(w.orgId, { ...fields, schedule: fields.schedule ? JSON.stringify(fields.schedule) : null }))
    .id;

describe('GET /v1/agents/{agentId}/status', () => {
  it('is always open without a schedule', async () => {
    ctx.clock.set('2026-11-22T03:00:00Z'); // a Sunday night
    const id = await agent({ name: 'Rund um die Uhr' });
    const res = await status(id).expect(200);
    expectSchema(res, AgentStatusSchema);
    expect(res.body).toEqual({
      id,
      name: 'Rund um die Uhr',
      is_active: true,
      schedule: null,
      timezone: 'Europe/Berlin',
      is_within_schedule: true,
      reason: 'schedule',
      exception: null,
      is_holiday: false,
      holiday: null,
      accepting_calls: true,
      routed_agent_id: id,
      next_change_at: null,
      on_vacation: false,
      vacation_mode: false,
      vacation_end: null,
      vacation_notdienst: false,
      accepting_emergency_calls: true,
    });
  });

  it('is within the schedule on a weekday morning and says when it closes', async () => {
    ctx.clock.set('2026-11-23T09:00:00Z'); // Monday 10:00 CET
    const id = await agent({ schedule: weekdays });
    const res = await status(id).expect(200);
    expect(res.body).toMatchObject({
      schedule: weekdays,
      is_within_schedule: true,
      accepting_calls: true,
      routed_agent_id: id,
      next_change_at: '2026-11-23T16:00:00.000Z',
    });
  });

  it('routes to the backup outside the schedule and says when it opens again', async () => {
    ctx.clock.set('2026-11-27T17:30:00Z'); // Friday 18:30 CET
    const backup = await agent({ name: 'Nachtdienst' });
    const id = await agent({ schedule: weekdays, backup_agent_id: backup });
    const res = await status(id).expect(200);
    expect(res.body).toMatchObject({
      is_within_schedule: false,
      accepting_calls: false,
      routed_agent_id: backup,
      next_change_at: '2026-11-30T07:00:00.000Z',
    });
  });

  it('routes nowhere outside the schedule without a backup or with an inactive one', async () => {
    ctx.clock.set('2026-11-28T10:00:00Z'); // Saturday
    const alone = await agent({ schedule: weekdays });
    expect((await status(alone).expect(200)).body.routed_agent_id).toBeNull();
    const sleeping = await agent({ is_active: false });
    const withInactive = await agent({ schedule: weekdays, backup_agent_id: sleeping });
    expect((await status(withInactive).expect(200)).body.routed_agent_id).toBeNull();
  });

  it('does not accept calls while inactive, even within the schedule', async () => {
    ctx.clock.set('2026-11-23T09:00:00Z');
    const backup = await agent();
    const id = await agent({ schedule: weekdays, is_active: false, backup_agent_id: backup });
    const res = await status(id).expect(200);
    expect(res.body).toMatchObject({
      is_active: false,
      is_within_schedule: true,
      accepting_calls: false,
      routed_agent_id: backup,
    });
  });

  it('is closed on Fronleichnam in Bavaria but open in Berlin', async () => {
    ctx.clock.set('2026-06-04T08:00:00Z'); // Thursday 10:00 CEST
    const bavaria = await agent({ schedule: weekdays, bundesland: 'BY' });
    const berlin = await agent({ schedule: weekdays, bundesland: 'BE' });
    expect((await status(bavaria).expect(200)).body).toMatchObject({
      is_within_schedule: false,
      is_holiday: true,
      holiday: { date: '2026-06-04', name: 'Fronleichnam' },
      accepting_calls: false,
      next_change_at: '2026-06-05T06:00:00.000Z',
    });
    expect((await status(berlin).expect(200)).body).toMatchObject({
      is_within_schedule: true,
      is_holiday: false,
      holiday: null,
    });
  });

  it('treats NRW as NW (Allerheiligen, Monday 1 November 2027)', async () => {
    ctx.clock.set('2027-11-01T09:00:00Z');
    for (const bundesland of ['NW', 'NRW']) {
      const id = await agent({ schedule: weekdays, bundesland });
      expect((await status(id).expect(200)).body).toMatchObject({
        is_within_schedule: false,
        holiday: { name: 'Allerheiligen' },
      });
    }
  });

  it('reports a holiday without closing an agent that has no schedule', async () => {
    ctx.clock.set('2026-10-31T10:00:00Z'); // Reformationstag in Saxony
    const id = await agent({ bundesland: 'SN' });
    expect((await status(id).expect(200)).body).toMatchObject({
      is_within_schedule: true,
      is_holiday: true,
      holiday: { name: 'Reformationstag' },
    });
  });

  it('uses the schedule time zone', async () => {
    ctx.clock.set('2026-11-23T13:30:00Z'); // 08:30 in New York, 14:30 in Berlin
    const id = await agent({
      schedule: {
        ...weekdays,
        timezone: 'America/New_York',
        rules: [{ days: [1], start_time: '09:00', end_time: '17:00' }],
      },
    });
    expect((await status(id).expect(200)).body).toMatchObject({
      timezone: 'America/New_York',
      is_within_schedule: false,
      next_change_at: '2026-11-23T14:00:00.000Z',
    });
  });

  it('follows a schedule written through PATCH', async () => {
    ctx.clock.set('2026-11-23T21:30:00Z'); // Monday 22:30 CET
    const id = await agent();
    await ctx.http
      .patch(`/v1/agents/${id}`)
      .set('X-API-Key', w.key)
      .send({ schedule: { timezone: 'Europe/Berlin', rules: [{ days: [1], start_time: '22:00', end_time: '06:00' }] } })
      .expect(200);
    expect((await status(id).expect(200)).body).toMatchObject({
      is_within_schedule: true,
      next_change_at: '2026-11-24T05:00:00.000Z',
    });
  });

  describe('access', () => {
    it('is 403 FORBIDDEN naming agents:read for a key without it', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:write'] });
      const res = await status(w.agentId, key.key).expect(403);
      expect(res.body.error).toMatchObject({
        code: 'FORBIDDEN',
        message: 'API key lacks required permission: agents:read',
      });
    });

    it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
      expect((await status(w.agentId, key.key).expect(403)).body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    });

    it('is 404 for an agent of another organization', async () => {
      const other = await ctx.build.world();
      expect((await status(other.agentId).expect(404)).body.error.code).toBe('NOT_FOUND');
    });

    it('is 400 naming agentId when it is not a UUID', async () => {
      expect((await status('x').expect(400)).body.error.details).toEqual([
        { field: 'agentId', message: 'Must be a UUID' },
      ]);
    });

    it('works for a dashboard member (read)', async () => {
      const member = await ctx.build.user(w.orgId, 'member');
      await ctx.http
        .get(`/v1/agents/${w.agentId}/status`)
        .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
        .expect(200);
    });
  });
});
