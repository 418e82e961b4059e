import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { MAX_TEST_CASES, TestCaseSchema, TestRunSchema } from '../../src/modules/simulation/simulation.schemas.js';

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
  exceptions: [{ from: '2027-02-15', to: '2027-02-19', closed: true as const, note: 'Betriebsurlaub' }],
};
const MONDAY_10 = '2026-11-23T10:00:00+01:00';

type Body = Record<string, unknown>;
const send = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: Body, key = w.key) => {
  const req = ctx.http[method](path).set('X-API-Key', key);
  return body === undefined ? req : req.send(body);
};
const cases = (id: string) => `/v1/agents/${id}/test-cases`;
const create = (id: string, body: Body, key = w.key) => send('post', cases(id), body, key);
const list = async (id: string) =>
  (await ctx.http.get(cases(id)).set('X-API-Key', w.key).expect(200)).body.data as { id: string }[];
const run = (id: string, body: Body = {}, key = w.key) => send('post', `${cases(id)}/run`, body, key);

async function agentWith(fields: Body = {}) {
  const backup = await ctx.build.agent(w.orgId, { name: 'Vertretung' });
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis', bundesland: 'BY' });
  await send('patch', `/v1/agents/${agent.id}`, { schedule, backup_agent_id: backup.id, ...fields }).expect(200);
  return { id: agent.id, backupId: backup.id };
}

const openCase = (id: string) => ({
  name: 'Montag 10:00 offen',
  input: { at: MONDAY_10 },
  expect: { accepting_calls: true, reason: 'open', answered_by_agent_id: id },
});

describe('test cases: create, list, delete', () => {
  it('saves a case (201 with an id), lists it and deletes it (204)', async () => {
    const { id } = await agentWith();
    const res = await create(id, {
      name: 'Heiligabend',
      input: { at: '2026-12-24T19:30:00+01:00', caller_number: '+49 176 1234 5678' },
      expect: { reason: 'outside_hours', greeting_contains: 'Guten' },
    }).expect(201);
    expectSchema(res, TestCaseSchema);
    expect(res.body).toMatchObject({
      agent_id: id,
      name: 'Heiligabend',
      input: { at: '2026-12-24T19:30:00+01:00', caller_number: '+4917612345678' },
      expect: { reason: 'outside_hours', greeting_contains: 'Guten' },
    });
    expect((await list(id)).map((c) => c.id)).toEqual([res.body.id]);
    await send('delete', `${cases(id)}/${res.body.id}`).expect(204);
    await send('delete', `${cases(id)}/${res.body.id}`).expect(404);
    expect(await list(id)).toEqual([]);
  });

  it('refuses a case without expectations, with an unknown reason or a bad moment, naming each field', async () => {
    const { id } = await agentWith();
    const res = await create(id, { name: '', input: { at: 'morgen' }, expect: { reason: 'closed' } }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'name',
      'input.at',
      'expect.reason',
    ]);
    const empty = await create(id, { name: 'x', input: { at: MONDAY_10 }, expect: {} }).expect(400);
    expect(empty.body.error.details[0].field).toBe('expect');
    await create(id, { name: 'x', input: { at: MONDAY_10 }, expect: { accepting: true } }).expect(400);
    expect(await list(id)).toEqual([]);
  });

  it('keeps at most 200 per agent, also under concurrent creates', async () => {
    const { id } = await agentWith();
    const now = new Date();
    await ctx.db('agent_test_cases').insert(
      Array.from({ length: MAX_TEST_CASES - 2 }, (_, i) => ({
        organization_id: w.orgId,
        agent_id: id,
        name: `Fall ${i}`,
        input: JSON.stringify({ at: MONDAY_10 }),
        expect: JSON.stringify({ accepting_calls: true }),
        created_at: now,
        updated_at: now,
      })),
    );
    const results = await Promise.all([1, 2, 3, 4].map(() => create(id, openCase(id))));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 409, 409]);
    expect(results.find((r) => r.status === 409)!.body.error.code).toBe('CONFLICT');
    expect(await list(id)).toHaveLength(MAX_TEST_CASES);
  });

  it('checks permissions, agent scope, organization and the owning agent', async () => {
    const { id } = await agentWith();
    const other = await agentWith();
    const saved = (await create(id, openCase(id)).expect(201)).body;
    const reader = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    expect((await create(id, openCase(id), reader.key).expect(403)).body.error.message).toContain('agents:write');
    await send('delete', `${cases(id)}/${saved.id}`, undefined, reader.key).expect(403);
    await run(id, {}, reader.key).expect(200);
    await send('post', `${cases(id)}/suggest`, {}, reader.key).expect(200);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [other.id] });
    expect((await run(id, {}, scoped.key).expect(403)).body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    const stranger = await ctx.build.world();
    await ctx.http.get(cases(id)).set('X-API-Key', stranger.key).expect(404);
    await send('delete', `${cases(other.id)}/${saved.id}`).expect(404);
    await send('delete', `${cases(id)}/nope`).expect(400);
    expect((await list(id)).map((c) => c.id)).toEqual([saved.id]);
  });
});

describe('POST /v1/agents/{agentId}/test-cases/run', () => {
  it('runs every case and lists each mismatch; changes and versions are simulated, not saved', async () => {
    const { id, backupId } = await agentWith();
    const open = (await create(id, openCase(id)).expect(201)).body;
    const wrong = (
      await create(id, {
        name: 'Falsch erwartet',
        input: { at: '2026-11-23T19:00:00+01:00' },
        expect: { accepting_calls: true, answered_by_agent_id: backupId, greeting_contains: 'Hallo' },
      }).expect(201)
    ).body;
    const res = await run(id).expect(200);
    expectSchema(res, TestRunSchema);
    expect(res.body).toEqual({
      passed: 1,
      failed: 1,
      results: [
        { id: open.id, name: open.name, passed: true, mismatches: [] },
        {
          id: wrong.id,
          name: 'Falsch erwartet',
          passed: false,
          mismatches: [
            { field: 'accepting_calls', expected: true, actual: false },
            { field: 'greeting_contains', expected: 'Hallo', actual: '' },
          ],
        },
      ],
    });
    const onVacation = await run(id, { changes: { vacation_mode: true } }).expect(200);
    expect(onVacation.body.results[0].mismatches).toEqual([
      { field: 'accepting_calls', expected: true, actual: false },
      { field: 'reason', expected: 'open', actual: 'vacation' },
      { field: 'answered_by_agent_id', expected: id, actual: backupId },
    ]);
    const bad = await run(id, { changes: { vacation_mode: 'ja' }, version: 'eins' }).expect(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['version', 'changes.vacation_mode']);
    await send('patch', `/v1/agents/${id}`, { is_active: false }).expect(200);
    expect((await run(id).expect(200)).body.passed).toBe(0);
    const versions = (await ctx.http.get(`/v1/agents/${id}/versions`).set('X-API-Key', w.key)).body.data;
    const before = versions[versions.length - 1].version;
    expect((await run(id, { version: before }).expect(200)).body.passed).toBe(1);
  });
});

describe('POST /v1/agents/{agentId}/test-cases/suggest', () => {
  it('suggests the moments that matter, each accepted by the create route as is and passing today', async () => {
    ctx.clock.set('2026-11-26T12:00:00Z');
    const { id } = await agentWith({ greeting: 'Guten Tag {{anrede}} {{nachname}}' });
    const max = await send('post', `/v1/agents/${id}/employees`, {
      name: 'Max Notdienst',
      phone_number: '+4930111222',
      status: 'notdienst',
    }).expect(201);
    await send('post', `/v1/agents/${id}/forwarding-slots`, {
      slotnummer: '01',
      cases: 'Notfall',
      prioritaet_1: 'Max Notdienst',
    }).expect(201);
    await ctx.db('contacts').insert({
      agent_id: id,
      organization_id: w.orgId,
      first_name: 'Anna',
      last_name: 'Schmidt',
      salutation: 'Frau',
      mobile_number: '+4917612345678',
    });
    const res = await send('post', `${cases(id)}/suggest`).expect(200);
    const names = res.body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual([
      'Werktag 09:00: innerhalb der Öffnungszeiten',
      'Werktag 20:00: außerhalb der Öffnungszeiten',
      'Samstag 11:00',
      'Sonntag 11:00',
      'Feiertag: 1. Weihnachtstag 11:00',
      'Heiligabend 19:30',
      'Silvester 15:00',
      'Ausnahme: Betriebsurlaub 12:00',
      'Nachtanruf 03:00',
      'Bekannter Anrufer',
    ]);
    const byName = (name: string) => res.body.data.find((c: { name: string }) => c.name === name);
    expect(byName('Heiligabend 19:30').input).toEqual({ at: '2026-12-24T19:30:00+01:00' });
    expect(byName('Ausnahme: Betriebsurlaub 12:00')).toMatchObject({
      input: { at: '2027-02-15T12:00:00+01:00' },
      expect: { reason: 'exception', accepting_calls: false },
    });
    expect(byName('Nachtanruf 03:00').expect.transfer_employee_id).toBe(max.body.id);
    expect(byName('Bekannter Anrufer')).toMatchObject({
      input: { caller_number: '+4917612345678' },
      expect: { greeting_contains: 'Guten Tag Frau Schmidt' },
    });
    expect(await list(id)).toEqual([]); // suggestions are not stored
    for (const suggestion of res.body.data) await create(id, suggestion).expect(201);
    const result = await run(id).expect(200);
    expect(result.body).toMatchObject({ passed: names.length, failed: 0 });
  });

  it('suggests passing cases for an agent without a schedule (always open) too', async () => {
    ctx.clock.set('2026-11-26T12:00:00Z');
    const id = (await ctx.build.agent(w.orgId, { name: 'Immer da' })).id;
    const res = await send('post', `${cases(id)}/suggest`).expect(200);
    expect(res.body.data.map((c: { name: string }) => c.name)).toContain('Werktag 20:00');
    for (const suggestion of res.body.data) {
      expect(suggestion.expect).toMatchObject({ accepting_calls: true, reason: 'open', answered_by_agent_id: id });
      await create(id, suggestion).expect(201);
    }
    expect((await run(id).expect(200)).body.failed).toBe(0);
  });

  it('leaves the known caller out without contacts:read', async () => {
    const { id } = await agentWith();
    await ctx.db('contacts').insert({ agent_id: id, organization_id: w.orgId, mobile_number: '+4917612345678' });
    const reader = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const res = await send('post', `${cases(id)}/suggest`, undefined, reader.key).expect(200);
    expect(res.body.data.some((c: { input: Body }) => 'caller_number' in c.input)).toBe(false);
  });
});

describe('require_passing_test_cases: the guard', () => {
  const agentState = (id: string) =>
    Promise.all([
      ctx.db('agents').where({ id }).first(),
      ctx.db('employees').where({ agent_id: id }).orderBy('id'),
      ctx.db('forwarding_slots').where({ agent_id: id }).orderBy('id'),
      ctx.db('tools').where({ agent_id: id }).orderBy('id'),
      ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }).first(),
    ]);

  /** The write is refused with TEST_CASES_FAILED naming the case, and nothing changed. */
  async function refused(id: string, write: () => PromiseLike<{ status: number; body: Body }>, field: string) {
    const before = await agentState(id);
    const res = await write();
    expect([res.status, (res.body.error as Body | undefined)?.code]).toEqual([409, 'TEST_CASES_FAILED']);
    const details = (res.body.error as { details: Body[] }).details;
    expect(details).toContainEqual(
      expect.objectContaining({
        field: expect.stringMatching(new RegExp(`^test_cases\\.[0-9a-f-]{36}\\.expect\\.${field}$`)),
      }),
    );
    expect(await agentState(id)).toEqual(before);
  }

  async function guarded(expect: Body, fields: Body = {}) {
    const { id, backupId } = await agentWith(fields);
    const saved = await create(id, { name: 'Muss bestehen', input: { at: MONDAY_10 }, expect });
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }).expect(200);
    return { id, backupId, caseId: saved.body.id as string };
  }

  it('refuses an agent PATCH that breaks a case, with each failing case and mismatch; a passing one goes through', async () => {
    const { id, caseId } = await guarded({ accepting_calls: true, reason: 'open' });
    const before = await agentState(id);
    const res = await send('patch', `/v1/agents/${id}`, { vacation_mode: true });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'TEST_CASES_FAILED',
      details: [
        {
          field: `test_cases.${caseId}.expect.accepting_calls`,
          case_id: caseId,
          case_name: 'Muss bestehen',
          expected: true,
          actual: false,
        },
        { field: `test_cases.${caseId}.expect.reason`, case_id: caseId, expected: 'open', actual: 'vacation' },
      ],
    });
    expect(await agentState(id)).toEqual(before);
    const fresh = await ctx.http.get(`/v1/agents/${id}`).set('X-API-Key', w.key).expect(200);
    expect(fresh.body).toMatchObject({ vacation_mode: false, require_passing_test_cases: true });
    await send('patch', `/v1/agents/${id}`, { name: 'Umbenannt' }).expect(200);
    // Switching the guard off always goes through, even together with the breaking change.
    await send('patch', `/v1/agents/${id}`, { vacation_mode: true, require_passing_test_cases: false }).expect(200);
    // And it cannot be switched on while a case fails.
    await refused(id, () => send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }), 'reason');
  });

  it('shows the failures of a dry run in Test-Cases-Failed instead of the 409, and stores nothing', async () => {
    const { id, caseId } = await guarded({ accepting_calls: true, reason: 'open' });
    const before = await agentState(id);
    const dry = await send('patch', `/v1/agents/${id}?dry_run=true`, { vacation_mode: true }).expect(200);
    expect(dry.headers['dry-run']).toBe('true');
    expect(dry.headers['test-cases-failed']).toBe(caseId);
    expect(dry.body).toMatchObject({ vacation_mode: true });
    const passing = await send('patch', `/v1/agents/${id}?dry_run=true`, { name: 'Umbenannt' }).expect(200);
    expect(passing.headers['test-cases-failed']).toBeUndefined();
    const slots = await send('put', `/v1/agents/${id}/forwarding-slots?dry_run=true`, { slots: [] }).expect(200);
    expect(slots.headers['dry-run']).toBe('true');
    expect(await agentState(id)).toEqual(before);
    await refused(id, () => send('patch', `/v1/agents/${id}`, { vacation_mode: true }), 'reason');
  });

  it('refuses a workflow PUT while a case fails, and a version restore that breaks one', async () => {
    const { id } = await guarded({ reason: 'open' });
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: false }).expect(200);
    await send('patch', `/v1/agents/${id}`, { is_active: false }).expect(200);
    const versions = (await ctx.http.get(`/v1/agents/${id}/versions`).set('X-API-Key', w.key)).body.data;
    const inactive = versions[0].version as number;
    await send('patch', `/v1/agents/${id}`, { is_active: true, require_passing_test_cases: true }).expect(200);
    await refused(id, () => send('post', `/v1/agents/${id}/versions/${inactive}/restore`), 'reason');
    await create(id, { name: 'Nie offen', input: { at: MONDAY_10 }, expect: { reason: 'holiday' } }).expect(201);
    const workflow = {
      name: 'Aufnahme',
      steps: [{ id: 'a', name: 'A', description: 'Anweisung', completion: 'fertig', next: [] }],
    };
    await refused(id, () => send('put', `/v1/agents/${id}/workflow`, workflow), 'reason');
  });

  it('refuses employee and forwarding-slot writes that change who a call is transferred to', async () => {
    const { id } = await agentWith();
    const employee = (body: Body) => send('post', `/v1/agents/${id}/employees`, body).expect(201);
    const max = (await employee({ name: 'Max', phone_number: '+4930111222', status: 'notdienst' })).body;
    await employee({ name: 'Eva', phone_number: '+4930333444', status: 'anwesend' });
    const slot = (
      await send('post', `/v1/agents/${id}/forwarding-slots`, {
        slotnummer: '05',
        cases: 'Notfall',
        prioritaet_1: 'Neu',
        prioritaet_2: 'Max',
      }).expect(201)
    ).body;
    await create(id, {
      name: 'Nachts zu Max',
      input: { at: '2026-11-24T03:00:00+01:00' },
      expect: { transfer_employee_id: max.id },
    }).expect(201);
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }).expect(200);
    const slots = `/v1/agents/${id}/forwarding-slots`;
    const field = 'transfer_employee_id';
    await refused(id, () => send('post', `/v1/agents/${id}/employees`, { name: 'Neu' }), field);
    await refused(id, () => send('patch', `/v1/agents/${id}/employees/${max.id}`, { status: 'urlaub' }), field);
    await refused(id, () => send('delete', `/v1/agents/${id}/employees/${max.id}`), field);
    await refused(id, () => send('post', slots, { slotnummer: '01', cases: 'Alles', prioritaet_1: 'Eva' }), field);
    await refused(id, () => send('patch', `${slots}/${slot.id}`, { prioritaet_2: 'Eva' }), field);
    await refused(id, () => send('delete', `${slots}/${slot.id}`), field);
    await refused(id, () => send('put', slots, { slots: [] }), field);
    await send('patch', `/v1/agents/${id}/employees/${max.id}`, { email: 'max@example.com' }).expect(200);
  });

  it('refuses tool writes that change who a call is transferred to', async () => {
    const { id } = await agentWith();
    const employee = (body: Body) => send('post', `/v1/agents/${id}/employees`, body).expect(201);
    const max = (await employee({ name: 'Max', phone_number: '+4930111222' })).body;
    const eva = (await employee({ name: 'Eva', phone_number: '+4930333444' })).body;
    const transfer = (name: string, employeeId: string, priority: number) => ({
      name,
      tool_type: 'transfer_call',
      description: 'Verbindet',
      employee_id: employeeId,
      priority,
      config: { transfer_mode: 'cold' },
    });
    const tool = (await send('post', `/v1/agents/${id}/tools`, transfer('zu_max', max.id, 5)).expect(201)).body;
    await create(id, { name: 'Zu Max', input: { at: MONDAY_10 }, expect: { transfer_employee_id: max.id } });
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }).expect(200);
    const field = 'transfer_employee_id';
    await refused(id, () => send('post', `/v1/agents/${id}/tools`, transfer('zu_eva', eva.id, 1)), field);
    await refused(id, () => send('patch', `/v1/agents/${id}/tools/${tool.id}`, { is_enabled: false }), field);
    await refused(id, () => send('delete', `/v1/agents/${id}/tools/${tool.id}`), field);
    await send('post', `/v1/agents/${id}/tools`, transfer('zu_eva', eva.id, 9)).expect(201);
  });
  it("refuses a write to a guarded agent's backup that breaks the agent's case, naming agent and case; the agent stays writable", async () => {
    const { id, backupId } = await agentWith();
    const saved = await create(id, {
      name: 'Abends zur Vertretung',
      input: { at: '2026-11-23T19:00:00+01:00' },
      expect: { answered_by_agent_id: backupId },
    }).expect(201);
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }).expect(200);
    const before = await agentState(backupId);
    const res = await send('patch', `/v1/agents/${backupId}`, { is_active: false });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'TEST_CASES_FAILED',
      details: [
        {
          field: `test_cases.${saved.body.id}.expect.answered_by_agent_id`,
          message: expect.stringContaining('Agent "Praxis", "Abends zur Vertretung"'),
          agent_id: id,
          case_id: saved.body.id,
          case_name: 'Abends zur Vertretung',
          expected: backupId,
          actual: null,
        },
      ],
    });
    expect(await agentState(backupId)).toEqual(before);
    const dry = await send('patch', `/v1/agents/${backupId}?dry_run=true`, { is_active: false }).expect(200);
    expect(dry.headers['test-cases-failed']).toBe(saved.body.id);
    // The guarded agent is not wedged, and writes to the backup that its calls do not read go through.
    await send('patch', `/v1/agents/${id}`, { name: 'Praxis Nord' }).expect(200);
    await send('patch', `/v1/agents/${backupId}`, { schedule, name: 'Vertretung Süd' }).expect(200);
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: false }).expect(200);
    await send('patch', `/v1/agents/${backupId}`, { is_active: false }).expect(200);
  });

  it('refuses contact writes that break a guarded greeting case, naming it, and stores nothing', async () => {
    const ANNA = '+4917612345678';
    const STRANGER = '+4930999888';
    const { id } = await agentWith({
      greeting: 'Guten Tag, Praxis Müller',
      greeting_variants: [{ greeting: 'Guten Tag {{anrede}} {{nachname}}', tag: 'vip' }],
    });
    const contacts = `/v1/agents/${id}/contacts`;
    const anna = (
      await send('post', contacts, {
        first_name: 'Anna',
        last_name: 'Schmidt',
        salutation: 'Frau',
        mobile_number: ANNA,
        tags: ['vip'],
      }).expect(201)
    ).body;
    const known = await create(id, {
      name: 'Anna wird erkannt',
      input: { at: MONDAY_10, caller_number: ANNA },
      expect: { greeting_contains: 'Frau Schmidt' },
    }).expect(201);
    const unknown = await create(id, {
      name: 'Fremde hören die Praxis',
      input: { at: MONDAY_10, caller_number: STRANGER },
      expect: { greeting_contains: 'Praxis Müller' },
    }).expect(201);
    await send('patch', `/v1/agents/${id}`, { require_passing_test_cases: true }).expect(200);
    const contactState = () => ctx.db('contacts').where({ agent_id: id }).orderBy('id');
    const before = await contactState();
    const refusedContactWrite = async (write: () => PromiseLike<{ status: number; body: Body }>, caseId: string) => {
      const res = await write();
      expect([res.status, (res.body.error as Body | undefined)?.code]).toEqual([409, 'TEST_CASES_FAILED']);
      const details = (res.body.error as { details: Body[] }).details;
      expect(details).toContainEqual(
        expect.objectContaining({
          agent_id: id,
          case_id: caseId,
          field: `test_cases.${caseId}.expect.greeting_contains`,
        }),
      );
      expect(await contactState()).toEqual(before);
      return details.find((d) => d.case_id === caseId)!;
    };
    const patchAnna = (body: Body) => send('patch', `${contacts}/${anna.id}`, body);
    await refusedContactWrite(() => patchAnna({ tags: [] }), known.body.id);
    // A greeting chosen with the contact is not shown to the writer (it may lack contacts:read).
    const renamed = await refusedContactWrite(() => patchAnna({ last_name: 'Meier' }), known.body.id);
    expect(renamed).toMatchObject({ expected: 'Frau Schmidt', actual: null });
    expect(JSON.stringify(renamed)).not.toContain('Meier');
    await refusedContactWrite(() => patchAnna({ salutation: 'Herr' }), known.body.id);
    await refusedContactWrite(() => patchAnna({ mobile_number: '+4917699999999' }), known.body.id);
    await refusedContactWrite(() => send('delete', `${contacts}/${anna.id}`), known.body.id);
    const newcomer = {
      first_name: 'Otto',
      last_name: 'Meier',
      salutation: 'Herr',
      mobile_number: STRANGER,
      tags: ['vip'],
    };
    await refusedContactWrite(() => send('post', contacts, newcomer), unknown.body.id);
    const dry = await send('patch', `${contacts}/${anna.id}?dry_run=true`, { tags: [] }).expect(200);
    expect(dry.headers['test-cases-failed']).toBe(known.body.id);
    expect(await contactState()).toEqual(before);
    // Writes the greeting does not read go through.
    await patchAnna({ email: 'anna@example.com', tags: ['vip', 'stamm'] }).expect(200);
    await send('post', contacts, { ...newcomer, tags: [] }).expect(201);
  });
});
