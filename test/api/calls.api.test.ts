import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { CallPageSchema } from '../../src/modules/calls/call.openapi.js';
import { CallSchema } from '../../src/modules/calls/call.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const calls = (agentId: string) => `/v1/agents/${agentId}/calls`;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
let sequence = 0;

const transcript = [
  { role: 'agent', text: 'Müller Haustechnik, guten Tag!' },
  { role: 'user', text: 'Meine Heizung ist ausgefallen.' },
];

function callBody(fields: Record<string, unknown> = {}) {
  sequence += 1;
  return {
    call_id: `tel-${sequence}-${Date.now()}`,
    phone_number: '+49 (30) 1234-567',
    customer_name: 'Erika Mustermann',
    customer_request: 'Heizung ausgefallen',
    duration: 95,
    general_success: true,
    disconnection_reason: 'user_hangup',
    call_summary: 'Caller reports a broken heating.',
    transcript,
    ...fields,
  };
}

async function employeeOf(agentId: string, name: string): Promise<string> {
  const res = await ctx.http.post(`/v1/agents/${agentId}/employees`).set('X-API-Key', w.key).send({ name }).expect(201);
  return res.body.id as string;
}

async function report(world: World, fields: Record<string, unknown> = {}, agentId = world.agentId) {
  const res = await ctx.http.post(calls(agentId)).set('X-API-Key', world.key).send(callBody(fields)).expect(201);
  return res.body as { id: string; call_id: string; [field: string]: unknown };
}

const eventsOf = (agentId: string) =>
  ctx.db('events').where({ agent_id: agentId }).orderBy('created_at').select('type', 'payload', 'organization_id');
const callRow = (id: string) => ctx.db('calls').where({ id }).first();

describe('POST /v1/agents/{agentId}/calls (intake)', () => {
  it('stores the call, answers 201 with it and records call.completed with the webhook call object', async () => {
    const world = await ctx.build.world();
    const res = await ctx.http
      .post(calls(world.agentId))
      .set('X-API-Key', world.key)
      .send(callBody({ call_id: 'abc-1' }))
      .expect(201);
    expectSchema(res, CallSchema);
    expect(res.body).toMatchObject({
      call_id: 'abc-1',
      agent_id: world.agentId,
      phone_number: '+49301234567',
      customer_name: 'Erika Mustermann',
      duration: 95,
      done: false,
      general_success: true,
      disconnection_reason: 'user_hangup',
      employee: null,
      note: null,
      is_purged: false,
      deleted_at: null,
    });
    expect(JSON.parse(res.body.transcript)).toEqual(transcript);

    const events = await eventsOf(world.agentId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'call.completed', organization_id: world.orgId });
    const { event, call } = events[0]!.payload;
    expect(event).toBe('call.completed');
    expect(Object.keys(call).sort()).toEqual(
      [
        'id',
        'call_id',
        'customer_name',
        'customer_request',
        'phone_number',
        'duration',
        'done',
        'general_success',
        'disconnection_reason',
        'call_summary',
        'transcript',
        'employee',
        'agent_id',
        'created_at',
        'extracted_data',
        'direction',
        'outbound_call_id',
        'experiment_id',
        'variant',
      ].sort(),
    );
    expect(call).toMatchObject({
      id: res.body.id,
      call_id: 'abc-1',
      duration: 95,
      employee: null,
      agent_id: world.agentId,
    });
    expect(typeof call.transcript).toBe('string');
    expect(JSON.parse(call.transcript)).toEqual(transcript);
  });

  it('returns the stored call with 200 for a repeated call_id, and neither stores nor records anything twice', async () => {
    const world = await ctx.build.world();
    const first = await report(world, { call_id: 'repeat-1', customer_name: 'First' });
    const again = await ctx.http
      .post(calls(world.agentId))
      .set('X-API-Key', world.key)
      .send(callBody({ call_id: 'repeat-1', customer_name: 'Second', duration: 3 }))
      .expect(200);
    expect(again.body).toEqual(first);
    expect(await ctx.db('calls').where({ agent_id: world.agentId }).count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await eventsOf(world.agentId)).toHaveLength(1);
    // Each request has its audit row: the repeat's, part of its failed insert, again after it.
    const audited = await ctx.db('audit_log').where({ agent_id: world.agentId, action: 'agents.calls.create' });
    expect(audited).toHaveLength(2);
  });

  it('keeps exactly one call when the same call_id is reported twice at the same moment', async () => {
    const world = await ctx.build.world();
    const body = callBody({ call_id: 'race-1' });
    const results = await Promise.all(
      [1, 2].map(() => ctx.http.post(calls(world.agentId)).set('X-API-Key', world.key).send(body)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 201]);
    expect(await ctx.db('calls').where({ agent_id: world.agentId }).count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await eventsOf(world.agentId)).toHaveLength(1);
  });

  it('treats the same call_id of two agents as two calls', async () => {
    const other = await ctx.build.agent(w.orgId);
    const a = await report(w, { call_id: 'shared-id' });
    const b = await report(w, { call_id: 'shared-id' }, other.id);
    expect(a.id).not.toBe(b.id);
  });

  it('accepts the transcript as a JSON string, as the webhook sends it', async () => {
    const call = await report(w, { transcript: JSON.stringify(transcript) });
    expect(JSON.parse(call.transcript as string)).toEqual(transcript);
  });

  it.each([
    [true, 9.9, true],
    [true, 10, false],
    [false, 3, false],
  ])('with short_calls_auto_edit %s marks a call of %s seconds done: %s', async (flag, duration, done) => {
    const agent = await ctx.build.agent(w.orgId, { short_calls_auto_edit: flag });
    const call = await report(w, { duration }, agent.id);
    expect(call.done).toBe(done);
  });

  it('puts done calls in the trash when the organization has auto_delete_done_calls, and records the event all the same', async () => {
    const world = await ctx.build.world();
    await ctx.db('organizations').where({ id: world.orgId }).update({ auto_delete_done_calls: true });
    await ctx.db('agents').where({ id: world.agentId }).update({ short_calls_auto_edit: true });
    await ctx.syncCaches();
    ctx.clock.set('2026-05-04T10:00:00Z');
    const short = await report(world, { duration: 4 });
    const marked = await report(world, { done: true });
    const open = await report(world, { duration: 60 });
    expect(short).toMatchObject({ done: true, deleted_at: '2026-05-04T10:00:00.000Z' });
    expect(marked).toMatchObject({ done: true, deleted_at: '2026-05-04T10:00:00.000Z' });
    expect(open).toMatchObject({ done: false, deleted_at: null });
    expect(await eventsOf(world.agentId)).toHaveLength(3);
  });

  it('lists every problem of an invalid body, stores nothing and records nothing', async () => {
    const world = await ctx.build.world();
    const res = await ctx.http
      .post(calls(world.agentId))
      .set('X-API-Key', world.key)
      .send({ call_id: ' ', duration: -1, done: 'yes', employee_id: 'x', transcript: [{ role: 'user' }] })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'call_id',
      'done',
      'duration',
      'employee_id',
      'transcript[0].text',
    ]);
    const missing = await ctx.http.post(calls(world.agentId)).set('X-API-Key', world.key).send({}).expect(400);
    expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['call_id', 'duration']);
    const badString = await ctx.http
      .post(calls(world.agentId))
      .set('X-API-Key', world.key)
      .send(callBody({ transcript: '[{' }))
      .expect(400);
    expect(badString.body.error.details[0].field).toBe('transcript');
    expect(await ctx.db('calls').where({ agent_id: world.agentId }).first()).toBeUndefined();
    expect(await eventsOf(world.agentId)).toEqual([]);
  });

  it('is 403 FORBIDDEN without calls:write (calls:read is not enough) and stores nothing', async () => {
    const world = await ctx.build.world();
    const key = await ctx.build.apiKey(world.orgId, world.userId, { permissions: ['calls:read'] });
    const res = await ctx.http.post(calls(world.agentId)).set('X-API-Key', key.key).send(callBody()).expect(403);
    expect(res.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'API key lacks required permission: calls:write',
    });
    expect(await ctx.db('calls').where({ agent_id: world.agentId }).first()).toBeUndefined();
    expect(await eventsOf(world.agentId)).toEqual([]);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE out of scope, 404 for another organization and 400 for a bad agentId, storing nothing', async () => {
    const world = await ctx.build.world();
    const scoped = await ctx.build.apiKey(world.orgId, world.userId, { allowedAgentIds: [] });
    const a = await ctx.http.post(calls(world.agentId)).set('X-API-Key', scoped.key).send(callBody()).expect(403);
    expect(a.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    await ctx.http.post(calls(world.agentId)).set('X-API-Key', w.key).send(callBody()).expect(404);
    expect(await ctx.db('calls').where({ agent_id: world.agentId }).first()).toBeUndefined();
    const b = await ctx.http.post(calls('x')).set('X-API-Key', w.key).send(callBody()).expect(400);
    expect(b.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });
});

describe('GET /v1/agents/{agentId}/calls', () => {
  let world: World;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    world = await ctx.build.world();
    ctx.clock.set('2026-03-01T09:00:00Z');
    ids.march1 = (await report(world, { customer_name: 'Anna Schmidt', phone_number: '+49 30 111', note: null })).id;
    ctx.clock.set('2026-03-15T12:30:00Z');
    ids.march15 = (
      await report(world, {
        customer_name: 'Bernd Meier',
        phone_number: '+4930222',
        done: true,
        transcript: [{ role: 'user', text: 'Es tropft aus dem Rohr' }],
      })
    ).id;
    ctx.clock.set('2026-03-31T23:59:59Z');
    ids.march31 = (
      await report(world, { customer_name: '100% Kunde_1', phone_number: '+4930111', call_summary: 'Rabatt 100%' })
    ).id;
    ctx.clock.set('2026-04-01T00:00:00Z');
    ids.april = (await report(world, { customer_name: 'Deleted Dora', phone_number: '+4930333' })).id;
    await ctx
      .db('calls')
      .where({ id: ids.april })
      .update({ deleted_at: new Date('2026-04-02T00:00:00Z') });
  });

  const list = async (query = '') => {
    const res = await ctx.http
      .get(`${calls(world.agentId)}${query}`)
      .set('X-API-Key', world.key)
      .expect(200);
    return res.body as { data: { id: string; [f: string]: unknown }[]; pagination: unknown };
  };
  const idsOf = (page: { data: { id: string }[] }) => page.data.map((c) => c.id);

  it('lists the calls newest first without transcripts and without the trash', async () => {
    const page = await list();
    expectSchema({ body: page }, CallPageSchema);
    expect(idsOf(page)).toEqual([ids.march31, ids.march15, ids.march1]);
    expect(page.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, next_cursor: null });
    expect(page.data[0]).not.toHaveProperty('transcript');
    expect(page.data[0]).toMatchObject({ agent_id: world.agentId, employee: null });
  });

  it('includes trashed calls with include_deleted=true', async () => {
    expect(idsOf(await list('?include_deleted=true'))).toEqual([ids.april, ids.march31, ids.march15, ids.march1]);
  });

  it('filters by done', async () => {
    expect(idsOf(await list('?done=true'))).toEqual([ids.march15]);
    expect(idsOf(await list('?done=false'))).toEqual([ids.march31, ids.march1]);
  });

  it('filters by from and to, inclusive, as dates (whole UTC days) or date-times', async () => {
    expect(idsOf(await list('?from=2026-03-15&to=2026-03-31'))).toEqual([ids.march31, ids.march15]);
    expect(idsOf(await list('?to=2026-03-15T12:30:00Z'))).toEqual([ids.march15, ids.march1]);
    expect(idsOf(await list('?from=2026-03-15T12:30:00.001Z&include_deleted=true'))).toEqual([ids.april, ids.march31]);
    expect(idsOf(await list(`?from=${encodeURIComponent('2026-03-01T10:00:00+02:00')}&to=2026-03-01`))).toEqual([
      ids.march1,
    ]);
  });

  it('filters by phone number, ignoring spaces, dashes and brackets', async () => {
    expect(idsOf(await list(`?phone_number=${encodeURIComponent('+49 (30) 111')}`))).toEqual([ids.march31, ids.march1]);
    expect(idsOf(await list('?phone_number=%2B4930999'))).toEqual([]);
  });

  it('searches names, summaries and the transcript text case-insensitively, taking % and _ literally', async () => {
    expect(idsOf(await list('?search=meier'))).toEqual([ids.march15]);
    expect(idsOf(await list('?search=TROPFT'))).toEqual([ids.march15]);
    expect(idsOf(await list('?search=100%25'))).toEqual([ids.march31]);
    expect(idsOf(await list('?search=e_1'))).toEqual([ids.march31]);
    expect(idsOf(await list('?search=role'))).toEqual([]);
  });

  it('pages with page and limit', async () => {
    const page = await list('?page=2&limit=2');
    expect(idsOf(page)).toEqual([ids.march1]);
    expect(page.pagination).toEqual({ page: 2, limit: 2, total: 3, pages: 2, next_cursor: null });
  });

  it('keeps the exact total on a page past the end and on an empty match', async () => {
    const past = await list('?page=3&limit=2');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 3, limit: 2, total: 3, pages: 2, next_cursor: null });
    const none = await list('?search=nobody-has-this&cursor=');
    expect(none.data).toEqual([]);
    expect(none.pagination).toEqual({ page: null, limit: 20, total: 0, pages: 0, next_cursor: null });
  });

  it('rejects bad filters, all in one 400', async () => {
    const res = await ctx.http
      .get(`${calls(world.agentId)}?done=yes&from=yesterday&include_deleted=1&limit=500`)
      .set('X-API-Key', world.key)
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'done',
      'from',
      'include_deleted',
      'limit',
    ]);
    const reversed = await ctx.http
      .get(`${calls(world.agentId)}?from=2026-04-01&to=2026-03-01`)
      .set('X-API-Key', world.key)
      .expect(400);
    expect(reversed.body.error.details).toEqual([{ field: 'to', message: 'Must not be before from' }]);
  });

  it('is 403 without calls:read, 403 AGENT_NOT_ACCESSIBLE out of scope and 404 for another organization', async () => {
    const writeOnly = await ctx.build.apiKey(world.orgId, world.userId, { permissions: ['calls:write'] });
    expect(
      (await ctx.http.get(calls(world.agentId)).set('X-API-Key', writeOnly.key).expect(403)).body.error.message,
    ).toBe('API key lacks required permission: calls:read');
    const scoped = await ctx.build.apiKey(world.orgId, world.userId, { allowedAgentIds: [] });
    expect((await ctx.http.get(calls(world.agentId)).set('X-API-Key', scoped.key).expect(403)).body.error.code).toBe(
      'AGENT_NOT_ACCESSIBLE',
    );
    await ctx.http.get(calls(world.agentId)).set('X-API-Key', w.key).expect(404);
  });
});

describe('GET /v1/agents/{agentId}/calls/{callId}', () => {
  it('returns one call with its transcript as a JSON string', async () => {
    const call = await report(w);
    const res = await ctx.http
      .get(`${calls(w.agentId)}/${call.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expectSchema(res, CallSchema);
    expect(res.body).toEqual(call);
    expect(JSON.parse(res.body.transcript)).toEqual(transcript);
  });

  it("is 404 for another agent's call and an unknown id, 400 for a malformed callId, 403 without calls:read", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await report(w, {}, sibling.id);
    await ctx.http
      .get(`${calls(w.agentId)}/${theirs.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    await ctx.http
      .get(`${calls(w.agentId)}/${UNKNOWN}`)
      .set('X-API-Key', w.key)
      .expect(404);
    const res = await ctx.http
      .get(`${calls(w.agentId)}/123`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(res.body.error.details).toEqual([{ field: 'callId', message: 'Must be a UUID' }]);
    const kbOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    await ctx.http
      .get(`${calls(w.agentId)}/${theirs.id}`)
      .set('X-API-Key', kbOnly.key)
      .expect(403);
  });
});

describe('PATCH /v1/agents/{agentId}/calls/{callId}', () => {
  it('sets done, note and employee_id, ignoring every other field', async () => {
    const call = await report(w);
    const employeeId = await employeeOf(w.agentId, 'Jonas Weber');
    const res = await ctx.http
      .patch(`${calls(w.agentId)}/${call.id}`)
      .set('X-API-Key', w.key)
      .send({
        done: true,
        note: 'Called back',
        employee_id: employeeId,
        customer_name: 'Hacker',
        duration: 1,
        is_purged: true,
      })
      .expect(200);
    expect(res.body).toMatchObject({
      done: true,
      note: 'Called back',
      employee_id: employeeId,
      customer_name: 'Erika Mustermann',
      duration: 95,
      is_purged: false,
      deleted_at: null,
    });
    expect(res.body.employee).toEqual({ id: employeeId, name: 'Jonas Weber' });
    const listed = await ctx.http
      .get(calls(w.agentId))
      .set('X-API-Key', w.key)
      .query({ include_deleted: 'true' })
      .expect(200);
    expect(listed.body.data.find((c: { id: string }) => c.id === call.id).employee).toEqual({
      id: employeeId,
      name: 'Jonas Weber',
    });
    const cleared = await ctx.http
      .patch(`${calls(w.agentId)}/${call.id}`)
      .set('X-API-Key', w.key)
      .send({ note: null, employee_id: null })
      .expect(200);
    expect(cleared.body).toMatchObject({ note: null, employee_id: null, employee: null, done: true });
  });

  it("refuses an employee of another agent or an unknown one with 400 and keeps the call's employee", async () => {
    const call = await report(w);
    const other = await ctx.build.agent(w.orgId);
    const foreign = await employeeOf(other.id, 'Fremd');
    for (const employeeId of [foreign, UNKNOWN]) {
      const res = await ctx.http
        .patch(`${calls(w.agentId)}/${call.id}`)
        .set('X-API-Key', w.key)
        .send({ employee_id: employeeId, note: 'x' })
        .expect(400);
      expect(res.body.error.details).toEqual([
        { field: 'employee_id', message: 'No employee of this agent has this id' },
      ]);
    }
    const row = await ctx.db('calls').where({ id: call.id }).first('employee_id', 'note');
    expect(row).toEqual({ employee_id: null, note: null });
  });

  it('records in call.completed the call exactly as stored and answered, with its dispatch job', async () => {
    const world = await ctx.build.world();
    await ctx.http
      .patch(`/v1/agents/${world.agentId}`)
      .set('X-API-Key', world.key)
      .send({
        redact_pii: ['email'],
        analysis_fields: [
          { name: 'urgency', type: 'enum', values: ['emergency', 'routine'] },
          { name: 'units', type: 'number' },
          { name: 'device', type: 'string' },
          { name: 'heating_issue', type: 'boolean' },
        ],
      })
      .expect(200);
    const employee = await ctx.http
      .post(`/v1/agents/${world.agentId}/employees`)
      .set('X-API-Key', world.key)
      .send({ name: 'Jonas Berg' })
      .expect(201);
    const employeeId = employee.body.id as string;
    const answer = await report(world, {
      customer_name: 'Zoë Ünal <zoe@example.com>',
      customer_request: 'Mail me at zoe@example.com',
      phone_number: '030 1234567',
      duration: 12.345,
      transcript: [
        { role: 'agent', text: 'Guten Tag' },
        { role: 'user', text: 'zoe@example.com, 😀 "quoted"\nline' },
      ],
      extracted_data: { units: 0.1, urgency: 'routine', heating_issue: false, device: 'Vaillant, zoe@example.com' },
      employee_id: employeeId,
      final_score: 7,
      audio_file_url: 'https://example.com/a.mp3',
    });
    const fetched = await ctx.http
      .get(`${calls(world.agentId)}/${answer.id}`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(fetched.body).toEqual(answer);
    const [event] = await ctx
      .db('events')
      .where({ agent_id: world.agentId, type: 'call.completed' })
      .select('id', 'payload');
    const { employee_id, note, is_purged, deleted_at, updated_at, audio_file_url, final_score, ...webhookCall } =
      answer;
    expect([employee_id, note, is_purged, deleted_at, updated_at, audio_file_url, final_score]).toEqual([
      employeeId,
      null,
      false,
      null,
      answer.created_at,
      'https://example.com/a.mp3',
      7,
    ]);
    expect(event.payload).toEqual({ event: 'call.completed', call: webhookCall });
    expect(webhookCall.transcript).toContain('[EMAIL]');
    expect(webhookCall.extracted_data).toEqual({
      units: 0.1,
      urgency: 'routine',
      heating_issue: false,
      device: 'Vaillant, [EMAIL]',
    });
    const jobs = await ctx
      .db('pgboss.job')
      .where({ name: 'events.dispatch' })
      .whereRaw(`data->>'eventId' = ?`, [event.id]);
    expect(jobs).toHaveLength(1);
  });

  it('names the employee in the stored call and in the call.completed event when intake links one', async () => {
    const employeeId = await employeeOf(w.agentId, 'Lena Koch');
    const call = await report(w, { employee_id: employeeId });
    expect(call.employee).toEqual({ id: employeeId, name: 'Lena Koch' });
    const event = await ctx
      .db('events')
      .where({ agent_id: w.agentId, type: 'call.completed' })
      .whereRaw(`payload->'call'->>'id' = ?`, [call.id])
      .first();
    expect(event.payload.call.employee).toEqual({ id: employeeId, name: 'Lena Koch' });
    const refused = await ctx.http
      .post(calls(w.agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ employee_id: UNKNOWN }))
      .expect(400);
    expect(refused.body.error.details).toEqual([
      { field: 'employee_id', message: 'No employee of this agent has this id' },
    ]);
  });

  it('puts a call marked done in the trash when the organization auto-deletes done calls', async () => {
    const world = await ctx.build.world();
    await ctx.db('organizations').where({ id: world.orgId }).update({ auto_delete_done_calls: true });
    const call = await report(world);
    ctx.clock.set('2026-06-01T08:00:00Z');
    const res = await ctx.http
      .patch(`${calls(world.agentId)}/${call.id}`)
      .set('X-API-Key', world.key)
      .send({ done: true })
      .expect(200);
    expect(res.body).toMatchObject({ done: true, deleted_at: '2026-06-01T08:00:00.000Z' });
  });

  it('rejects wrong types with every field named and changes nothing', async () => {
    const call = await report(w);
    const before = await callRow(call.id);
    const res = await ctx.http
      .patch(`${calls(w.agentId)}/${call.id}`)
      .set('X-API-Key', w.key)
      .send({ done: 'yes', note: 5, employee_id: 'abc' })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'done',
      'employee_id',
      'note',
    ]);
    expect(await callRow(call.id)).toEqual(before);
  });

  it("is 404 for another agent's call and 403 without calls:write or out of scope, changing nothing", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await report(w, {}, sibling.id);
    await ctx.http
      .patch(`${calls(w.agentId)}/${theirs.id}`)
      .set('X-API-Key', w.key)
      .send({ done: true })
      .expect(404);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    await ctx.http
      .patch(`${calls(sibling.id)}/${theirs.id}`)
      .set('X-API-Key', readOnly.key)
      .send({ done: true })
      .expect(403);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const res = await ctx.http
      .patch(`${calls(sibling.id)}/${theirs.id}`)
      .set('X-API-Key', scoped.key)
      .send({ done: true })
      .expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    expect((await callRow(theirs.id)).done).toBe(false);
  });
});

describe('counting the calls of a caller today (for greeting variants)', () => {
  it('counts the calls of one number in the given day, trashed ones included, whatever the number formatting', async () => {
    const world = await ctx.build.world();
    const agent = { id: world.agentId, organization_id: world.orgId };
    ctx.clock.set('2026-07-10T05:00:00Z');
    await report(world, { phone_number: '+49 171 555' });
    ctx.clock.set('2026-07-10T18:00:00Z');
    const trashed = await report(world, { phone_number: '+49171555' });
    await ctx.db('calls').where({ id: trashed.id }).update({ deleted_at: new Date() });
    ctx.clock.set('2026-07-11T01:00:00Z');
    await report(world, { phone_number: '+49171555' });
    const count = (number: string) =>
      ctx.internals.callRepository.countCallsToday(
        agent,
        number,
        new Date('2026-07-10T00:00:00Z'),
        new Date('2026-07-11T00:00:00Z'),
      );
    expect(await count('+49-171-555')).toBe(2);
    expect(await count('+49171556')).toBe(0);
  });
});

describe('call routes in the API description', () => {
  it('lists every route with its methods, and a wrong method is 405', async () => {
    const doc = await ctx.http.get('/v1/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths['/v1/agents/{agentId}/calls']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.body.paths['/v1/agents/{agentId}/calls/{callId}']).sort()).toEqual(['get', 'patch']);
    const res = await ctx.http
      .delete(`${calls(w.agentId)}/${UNKNOWN}`)
      .set('X-API-Key', w.key)
      .expect(405);
    expect(res.headers.allow).toBe('GET, PATCH');
  });
});
