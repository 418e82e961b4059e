import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { SimulationSchema } from '../../src/modules/simulation/simulation.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const schedule = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
  exceptions: [{ date: '2026-12-24', closed: true as const, note: 'Heiligabend' }],
};
const variants = [
  { greeting: 'Guten Morgen {{anrede}} {{nachname}}!', tag: 'vip', from: '06:00', to: '11:00' },
  { greeting: 'Gute Nacht', from: '22:00', to: '06:00' },
];
const ANNA = '+4917612345678';

const api = (key = w.key) => ({
  simulate: (id: string, body: unknown) =>
    ctx.http
      .post(`/v1/agents/${id}/simulate`)
      .set('X-API-Key', key)
      .send(body as object),
  status: (id: string) => ctx.http.get(`/v1/agents/${id}/status`).set('X-API-Key', key),
  preview: (id: string, body: unknown) =>
    ctx.http
      .post(`/v1/agents/${id}/greeting/preview`)
      .set('X-API-Key', key)
      .send(body as object),
  patch: (id: string, body: unknown) =>
    ctx.http
      .patch(`/v1/agents/${id}`)
      .set('X-API-Key', key)
      .send(body as object),
});

/** An agent with hours, a Christmas Eve closure, greeting variants, a backup and a VIP contact. */
async function christmasAgent(fields: Record<string, unknown> = {}) {
  const backup = await ctx.build.agent(w.orgId, { name: 'Vertretung' });
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis', bundesland: 'BY' });
  await api()
    .patch(agent.id, {
      schedule,
      greeting: 'Guten Tag, Praxis Müller',
      greeting_variants: variants,
      backup_agent_id: backup.id,
      ...fields,
    })
    .expect(200);
  await ctx.db('contacts').insert({
    agent_id: agent.id,
    organization_id: w.orgId,
    first_name: 'Anna',
    last_name: 'Schmidt',
    salutation: 'Frau',
    mobile_number: ANNA,
    tags: ['VIP'],
  });
  return { id: agent.id, backupId: backup.id };
}

/** The same moment through /status (clock set to it), the greeting preview and /simulate. */
async function threeWays(id: string, at: string, caller: string | null) {
  ctx.clock.set(at);
  const status = (await api().status(id).expect(200)).body;
  const preview = (
    await api()
      .preview(id, caller ? { at, caller_phone: caller } : { at })
      .expect(200)
  ).body;
  const res = await api()
    .simulate(id, caller ? { at, caller_number: caller } : { at })
    .expect(200);
  expectSchema(res, SimulationSchema);
  return { status, preview, simulation: res.body };
}

describe('POST /v1/agents/{agentId}/simulate', () => {
  it('answers exactly as /status and the greeting preview do, at every kind of moment', async () => {
    const { id } = await christmasAgent();
    const moments = [
      '2026-11-23T08:30:00.000Z', // Monday 09:30: open, VIP morning variant
      '2026-11-23T18:00:00.000Z', // Monday 19:00: closed, backup
      '2026-11-22T22:30:00.000Z', // Sunday 23:30: night variant
      '2026-12-24T18:30:00.000Z', // Christmas Eve 19:30: the closure
      '2026-12-24T09:00:00.000Z', // Christmas Eve 10:00: the closure still
      '2026-12-25T10:00:00.000Z', // Christmas Day: holiday
      '2026-01-06T10:00:00.000Z', // Epiphany: a holiday in Bavaria only
    ];
    for (const at of moments) {
      for (const caller of [ANNA, null]) {
        const { status, preview, simulation } = await threeWays(id, at, caller);
        expect({ at, caller, ...simulation }).toMatchObject({
          at,
          caller,
          agent_id: id,
          accepting_calls: status.accepting_calls,
          holiday: status.holiday,
          exception: status.exception,
          answered_by: { agent_id: status.routed_agent_id },
          next_change_at: status.next_change_at,
          greeting: { text: preview.greeting ?? '', variant_index: preview.variant_index },
          contact: preview.contact ? { id: preview.contact.id, name: 'Anna Schmidt' } : null,
        });
      }
    }
  });

  it('walks the Christmas example: the closure sends a known caller to the backup, with the evening greeting', async () => {
    const { id, backupId } = await christmasAgent();
    const res = await api()
      .simulate(id, { at: '2026-12-24T19:30:00+01:00', caller_number: '+49 176 1234 5678' })
      .expect(200);
    expect(res.body).toEqual({
      at: '2026-12-24T18:30:00.000Z',
      agent_id: id,
      accepting_calls: false,
      reason: 'exception',
      holiday: null,
      exception: { date: '2026-12-24', closed: true, note: 'Heiligabend' },
      answered_by: { agent_id: backupId, via: 'backup' },
      greeting: { text: 'Guten Tag, Praxis Müller', variant_index: null },
      contact: { id: expect.any(String), name: 'Anna Schmidt' },
      transfer_targets: [],
      tools: [],
      next_change_at: '2026-12-28T07:00:00.000Z',
    });
  });

  it('names every reason and every way a call is answered', async () => {
    const { id, backupId } = await christmasAgent();
    const lonely = (await ctx.build.agent(w.orgId, { name: 'Allein' })).id;
    await api().patch(lonely, { schedule }).expect(200);
    const cases: [string, Record<string, unknown>, string, unknown][] = [
      [id, { at: '2026-11-23T10:00:00+01:00' }, 'open', { agent_id: id, via: 'self' }],
      [id, { at: '2026-11-23T19:00:00+01:00' }, 'outside_hours', { agent_id: backupId, via: 'backup' }],
      [id, { at: '2026-12-25T10:00:00+01:00' }, 'holiday', { agent_id: backupId, via: 'backup' }],
      [id, { at: '2026-12-24T10:00:00+01:00' }, 'exception', { agent_id: backupId, via: 'backup' }],
      [
        id,
        { at: '2026-11-23T10:00:00+01:00', changes: { vacation_mode: true } },
        'vacation',
        { agent_id: backupId, via: 'vacation_backup' },
      ],
      [
        id,
        { at: '2026-11-23T10:00:00+01:00', changes: { is_active: false } },
        'inactive',
        { agent_id: backupId, via: 'backup' },
      ],
      [lonely, { at: '2026-11-23T19:00:00+01:00' }, 'outside_hours', { agent_id: null, via: 'none' }],
    ];
    for (const [agentId, body, reason, answered] of cases) {
      const res = await api().simulate(agentId, body).expect(200);
      expect([body, res.body.reason, res.body.answered_by]).toEqual([body, reason, answered]);
      expect(res.body.accepting_calls).toBe(reason === 'open');
    }
  });

  it('defaults `at` to now', async () => {
    const { id } = await christmasAgent();
    ctx.clock.set('2026-11-23T09:00:00Z');
    const res = await api().simulate(id, {}).expect(200);
    expect(res.body).toMatchObject({ at: '2026-11-23T09:00:00.000Z', reason: 'open' });
  });

  it('applies `changes` in memory only and leaves the agent as it was', async () => {
    const { id, backupId } = await christmasAgent();
    const before = (await ctx.http.get(`/v1/agents/${id}`).set('X-API-Key', w.key).expect(200)).body;
    const res = await api()
      .simulate(id, {
        at: '2026-12-24T10:00:00+01:00',
        changes: { schedule: { ...schedule, exceptions: [] }, greeting: 'Frohe Weihnachten' },
      })
      .expect(200);
    expect(res.body).toMatchObject({ reason: 'open', greeting: { text: 'Frohe Weihnachten' } });
    const after = (await ctx.http.get(`/v1/agents/${id}`).set('X-API-Key', w.key).expect(200)).body;
    expect(after).toEqual(before);
    expect(after.backup_agent_id).toBe(backupId);
  });

  it('routes to a backup agent named in `changes`, read with the rest of the configuration', async () => {
    const { id } = await christmasAgent();
    const other = (await ctx.build.agent(w.orgId, { name: 'Andere Vertretung' })).id;
    const res = await api()
      .simulate(id, { at: '2026-11-23T19:00:00+01:00', changes: { backup_agent_id: other } })
      .expect(200);
    expect(res.body.answered_by).toEqual({ agent_id: other, via: 'backup' });
    const none = await api()
      .simulate(id, { at: '2026-11-23T19:00:00+01:00', changes: { backup_agent_id: null } })
      .expect(200);
    expect(none.body.answered_by).toEqual({ agent_id: null, via: 'none' });
  });

  it('validates `changes` exactly like PATCH: 400 naming each field, nothing simulated', async () => {
    const { id } = await christmasAgent();
    const changes = {
      schedule: { timezone: 'Mars/Olympus', rules: [] },
      id: '00000000-0000-4000-8000-000000000000',
      colour: 'blue',
      backup_agent_id: id,
    };
    const patched = await api().patch(id, changes).expect(400);
    const res = await api().simulate(id, { at: 'tomorrow', changes }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(['at', ...patched.body.error.details.map((d: { field: string }) => `changes.${d.field}`)]);
    expect(fields).toEqual(
      expect.arrayContaining(['changes.schedule.timezone', 'changes.id', 'changes.colour', 'changes.backup_agent_id']),
    );
    await api().simulate(id, { changes: 'vacation' }).expect(400);
    await api().simulate(id, { caller_number: '12' }).expect(400);
    await api().simulate(id, { version: 0 }).expect(400);
    await api().simulate(id, { extra: true }).expect(400);
  });

  it('simulates a stored configuration version, and 404 for a version that does not exist', async () => {
    const { id } = await christmasAgent();
    const versions = (await ctx.http.get(`/v1/agents/${id}/versions`).set('X-API-Key', w.key).expect(200)).body;
    const first = versions.data[0].version as number;
    await api().patch(id, { greeting: 'Neuer Gruß', schedule: null }).expect(200);
    const now = await api().simulate(id, { at: '2026-12-24T10:00:00+01:00' }).expect(200);
    expect(now.body).toMatchObject({ reason: 'open', greeting: { text: 'Neuer Gruß' } });
    const old = await api().simulate(id, { at: '2026-12-24T10:00:00+01:00', version: first }).expect(200);
    expect(old.body).toMatchObject({ reason: 'exception', greeting: { text: 'Guten Tag, Praxis Müller' } });
    const both = await api()
      .simulate(id, { at: '2026-12-24T10:00:00+01:00', version: first, changes: { greeting: 'Beides' } })
      .expect(200);
    expect(both.body).toMatchObject({ reason: 'exception', greeting: { text: 'Beides' } });
    const missing = await api().simulate(id, { version: 9999 }).expect(404);
    expect(missing.body.error.message).toBe('Agent version not found');
  });

  it('lists the transfer targets of the forwarding slots and linked tools, and the enabled tools', async () => {
    const { id } = await christmasAgent();
    const post = (path: string, body: unknown) =>
      ctx.http
        .post(`/v1/agents/${id}/${path}`)
        .set('X-API-Key', w.key)
        .send(body as object)
        .then((res) => {
          expect([path, res.status, res.body.error]).toEqual([path, 201, undefined]);
          return res;
        });
    const max = (await post('employees', { name: 'Max Notdienst', phone_number: '+4930111222', status: 'notdienst' }))
      .body;
    const eva = (await post('employees', { name: 'Eva Urlaub', phone_number: '+4930333444', status: 'urlaub' })).body;
    await post('forwarding-slots', {
      slotnummer: '01',
      cases: 'Notfall',
      prioritaet_1: 'Eva Urlaub',
      prioritaet_2: max.id,
    });
    await post('forwarding-slots', { slotnummer: '02', cases: 'Extern', prioritaet_1: '+4989123456' });
    await post('tools', {
      name: 'transfer_max',
      tool_type: 'transfer_call',
      description: 'Verbindet mit Max',
      employee_id: max.id,
      config: { transfer_mode: 'cold' },
    });
    await post('tools', {
      name: 'end_call',
      tool_type: 'end_call',
      description: 'Auflegen',
      is_enabled: false,
      config: {},
    });
    const res = await api().simulate(id, { at: '2026-11-23T03:00:00+01:00' }).expect(200);
    expect(res.body.transfer_targets).toEqual([
      { slot_number: '01', employee_id: eva.id, name: 'Eva Urlaub', status: 'urlaub', available: false },
      { slot_number: '01', employee_id: max.id, name: 'Max Notdienst', status: 'notdienst', available: true },
      { slot_number: '02', employee_id: null, name: '+4989123456', status: null, available: true },
      { slot_number: null, employee_id: max.id, name: 'Max Notdienst', status: 'notdienst', available: true },
    ]);
    expect(res.body.tools).toEqual(['transfer_max']);
  });

  it('checks permission, agent scope and organization before the body', async () => {
    const { id } = await christmasAgent();
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    const res = await api(noRead.key).simulate(id, { at: 'x' }).expect(403);
    expect(res.body.error.message).toContain('agents:read');
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    expect((await api(scoped.key).simulate(id, {}).expect(403)).body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    const other = await ctx.build.world();
    await api(other.key).simulate(id, {}).expect(404);
    await api().simulate('not-a-uuid', {}).expect(400);
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .post(`/v1/agents/${id}/simulate`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .send({ at: '2026-11-23T10:00:00+01:00' })
      .expect(200);
  });
});
