import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_DISPATCH_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const base = (agentId: string) => `/v1/agents/${agentId}/employees`;

type Employee = { id: string; name: string; status: string; active: boolean; [k: string]: unknown };

async function freshAgent(name = 'Employees Agent', orgId = w.orgId): Promise<string> {
  return (await ctx.build.agent(orgId, { name })).id;
}

function create(agentId: string, body: Record<string, unknown>, key = w.key) {
  return ctx.http.post(base(agentId)).set('X-API-Key', key).send(body);
}

async function employeeRow(id: string) {
  return ctx.db('employees').where({ id }).first();
}

async function statusEvents(agentId: string) {
  return ctx.db('events').where({ agent_id: agentId, type: 'employee.forwarding_created' }).orderBy('created_at');
}

describe('POST /v1/agents/{agentId}/employees', () => {
  it('creates an employee with 201 and the documented defaults', async () => {
    const agentId = await freshAgent();
    const res = await create(agentId, { name: ' Erika Muster ' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      agent_id: agentId,
      name: 'Erika Muster',
      phone_number: null,
      email: null,
      status: 'anwesend',
      active: true,
      get_mail: false,
      back_at_work_at: null,
      notdienst_bereich: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('normalises the phone number to E.164 and keeps the given fields', async () => {
    const agentId = await freshAgent();
    const res = await create(agentId, {
      name: 'Max',
      phone_number: '030 / 123 45-67',
      email: 'max@example.com',
      status: 'urlaub',
      active: false,
      get_mail: true,
      back_at_work_at: '2026-12-01',
    }).expect(201);
    expect(res.body).toMatchObject({
      phone_number: '+49301234567',
      email: 'max@example.com',
      status: 'urlaub',
      active: false,
      get_mail: true,
      back_at_work_at: '2026-12-01',
    });
    expect((await employeeRow(res.body.id)).phone_number).toBe('+49301234567');
  });

  it('stores an empty phone number or email as null', async () => {
    const agentId = await freshAgent();
    const res = await create(agentId, { name: 'Blank', phone_number: '', email: ' ' }).expect(201);
    expect(res.body).toMatchObject({ phone_number: null, email: null });
  });

  it('lists every problem of an invalid employee at once and writes nothing', async () => {
    const agentId = await freshAgent();
    const res = await create(agentId, {
      phone_number: '12ab',
      email: 'not-an-email',
      status: 'weg',
      active: 'yes',
      back_at_work_at: '2026-13-45',
    }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'active',
      'back_at_work_at',
      'email',
      'name',
      'phone_number',
      'status',
    ]);
    expect(await ctx.db('employees').where({ agent_id: agentId })).toEqual([]);
  });

  it('keeps notdienst_bereich with status notdienst and refuses it with another status', async () => {
    const agentId = await freshAgent();
    const onDuty = await create(agentId, { name: 'A', status: 'notdienst', notdienst_bereich: 'Nord' }).expect(201);
    expect(onDuty.body.notdienst_bereich).toBe('Nord');
    const res = await create(agentId, { name: 'B', status: 'anwesend', notdienst_bereich: 'Nord' }).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'notdienst_bereich', message: 'Only allowed while status is notdienst' },
    ]);
    expect(await ctx.db('employees').where({ agent_id: agentId }).count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it("accepts only the organization's emergency-duty areas once it defines some", async () => {
    const org = await ctx.build.organization();
    await ctx
      .db('organizations')
      .where({ id: org.id })
      .update({ notdienst_bereiche: ['Nord', 'Süd'] });
    const user = await ctx.build.user(org.id);
    const key = (await ctx.build.apiKey(org.id, user.id)).key;
    const agentId = await freshAgent('Areas', org.id);
    await create(agentId, { name: 'A', status: 'notdienst', notdienst_bereich: 'Süd' }, key).expect(201);
    const res = await create(agentId, { name: 'B', status: 'notdienst', notdienst_bereich: 'West' }, key).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'notdienst_bereich', message: "Must be one of the organization's areas: Nord, Süd" },
    ]);
  });
});

describe('GET /v1/agents/{agentId}/employees', () => {
  it('lists alphabetically, case-insensitively, with pagination', async () => {
    const agentId = await freshAgent();
    for (const name of ['carl', 'Anna', 'bert', 'Dora']) await create(agentId, { name }).expect(201);
    const res = await ctx.http
      .get(`${base(agentId)}?limit=3`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body.data.map((e: Employee) => e.name)).toEqual(['Anna', 'bert', 'carl']);
    expect(res.body.pagination).toEqual({ page: 1, limit: 3, total: 4, pages: 2 });
    const page2 = await ctx.http
      .get(`${base(agentId)}?limit=3&page=2`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(page2.body.data.map((e: Employee) => e.name)).toEqual(['Dora']);
  });

  it('filters by status and by the active flag', async () => {
    const agentId = await freshAgent();
    await create(agentId, { name: 'A', status: 'krank' }).expect(201);
    await create(agentId, { name: 'B', status: 'krank', active: false }).expect(201);
    await create(agentId, { name: 'C', status: 'anwesend', active: false }).expect(201);
    const sick = await ctx.http
      .get(`${base(agentId)}?status=krank`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(sick.body.data.map((e: Employee) => e.name)).toEqual(['A', 'B']);
    const inactive = await ctx.http
      .get(`${base(agentId)}?active=false`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(inactive.body.data.map((e: Employee) => e.name)).toEqual(['B', 'C']);
    const both = await ctx.http
      .get(`${base(agentId)}?status=krank&active=true`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(both.body.data.map((e: Employee) => e.name)).toEqual(['A']);
    expect(both.body.pagination.total).toBe(1);
  });

  it.each([
    ['status=weg', 'status'],
    ['active=yes', 'active'],
    ['limit=0', 'limit'],
  ])('refuses %s with a 400 naming %s', async (query, field) => {
    const res = await ctx.http
      .get(`${base(w.agentId)}?${query}`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  });

  it('returns one employee by id', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'One' }).expect(201);
    const res = await ctx.http
      .get(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body).toEqual(created.body);
  });
});

describe('PATCH /v1/agents/{agentId}/employees/{employeeId}', () => {
  it('changes the given fields, clears with null, ignores unknown fields', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'Old', phone_number: '+4930111', email: 'a@example.com' }).expect(
      201,
    );
    const res = await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ name: 'New', email: null, get_mail: true, id: UNKNOWN, agent_id: UNKNOWN, bogus: true })
      .expect(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      agent_id: agentId,
      name: 'New',
      email: null,
      phone_number: '+4930111',
      get_mail: true,
    });
  });

  it('records the employee.forwarding_created event with the change, in the same transaction', async () => {
    ctx.clock.set('2026-11-21T23:30:00Z'); // already the 22nd in Berlin
    const agentId = await freshAgent('Zentrale');
    const created = await create(agentId, {
      name: 'Erika',
      phone_number: '+4930222',
      email: 'erika@example.com',
    }).expect(201);
    await ctx.queue.runPending(EVENT_DISPATCH_QUEUE, async () => {}); // drain jobs of earlier tests
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'urlaub' })
      .expect(200);

    const events = await statusEvents(agentId);
    expect(events).toHaveLength(1);
    expect(events[0].organization_id).toBe(w.orgId);
    expect(events[0].payload).toEqual({
      event: 'employee.forwarding_created',
      employee: {
        name: 'Erika',
        phone_number: '+4930222',
        email: 'erika@example.com',
        id: created.body.id,
        status: 'urlaub',
        previous_status: 'anwesend',
        back_at_work_at: null,
      },
      agents: ['Zentrale'],
      substitute: null,
      responsibilities: null,
      start_date: '2026-11-22',
      reasons: ['urlaub'],
    });
    const dispatched: string[] = [];
    await ctx.queue.runPending<{ eventId: string }>(EVENT_DISPATCH_QUEUE, async (job) => {
      dispatched.push(job.eventId);
    });
    expect(dispatched).toEqual([events[0].id]);
  });

  it('carries substitute, responsibilities, start date and reasons of the request into the event', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'Max' }).expect(201);
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({
        status: 'krank',
        back_at_work_at: '2026-12-03',
        substitute: 'Erika',
        responsibilities: 'Notrufe Heizung',
        start_date: '2026-11-30',
        reasons: ['Grippe'],
      })
      .expect(200);
    const [event] = await statusEvents(agentId);
    expect(event.payload).toMatchObject({
      employee: { status: 'krank', previous_status: 'anwesend', back_at_work_at: '2026-12-03' },
      substitute: 'Erika',
      responsibilities: 'Notrufe Heizung',
      start_date: '2026-11-30',
      reasons: ['Grippe'],
    });
    expect(await employeeRow(created.body.id)).not.toHaveProperty('substitute');
  });

  it('records no event when the status stays the same', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'Max', status: 'urlaub' }).expect(201);
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'urlaub', name: 'Maxi' })
      .expect(200);
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ active: false })
      .expect(200);
    expect(await statusEvents(agentId)).toEqual([]);
  });

  it('records no event and changes nothing when the change is refused', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'Max' }).expect(201);
    const before = await employeeRow(created.body.id);
    const invalid = await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'krank', email: 'nope' })
      .expect(400);
    expect(invalid.body.error.details).toEqual([{ field: 'email', message: 'Must be an email address' }]);
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'krank', notdienst_bereich: 'Nord' })
      .expect(400);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['employees:read'] });
    await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', readOnly.key)
      .send({ status: 'krank' })
      .expect(403);
    expect(await employeeRow(created.body.id)).toEqual(before);
    expect(await statusEvents(agentId)).toEqual([]);
  });

  it('clears notdienst_bereich when the employee leaves emergency duty', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'A', status: 'notdienst', notdienst_bereich: 'Nord' }).expect(201);
    const res = await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'anwesend' })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'anwesend', notdienst_bereich: null });
    const back = await ctx.http
      .patch(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'notdienst', notdienst_bereich: 'Süd' })
      .expect(200);
    expect(back.body).toMatchObject({ status: 'notdienst', notdienst_bereich: 'Süd' });
  });
});

describe('DELETE /v1/agents/{agentId}/employees/{employeeId}', () => {
  it('deletes with 204 and no body; then the employee is 404', async () => {
    const agentId = await freshAgent();
    const created = await create(agentId, { name: 'Gone' }).expect(201);
    const res = await ctx.http
      .delete(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .expect(204);
    expect(res.text).toBe('');
    expect(await employeeRow(created.body.id)).toBeUndefined();
    await ctx.http
      .get(`${base(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
  });

  it('refuses with 409 while a transfer tool forwards to the employee, and keeps both', async () => {
    const agentId = await freshAgent();
    const employee = await create(agentId, { name: 'Linked', phone_number: '+4930333' }).expect(201);
    await ctx.http
      .post(`/v1/agents/${agentId}/tools`)
      .set('X-API-Key', w.key)
      .send({ name: 'to_linked', tool_type: 'transfer_call', employee_id: employee.body.id })
      .expect(201);
    const res = await ctx.http
      .delete(`${base(agentId)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.details).toEqual([{ field: 'employee_id', message: 'Linked tools: to_linked' }]);
    expect(await employeeRow(employee.body.id)).toBeDefined();
  });
});

describe('employee phone numbers and linked transfer tools', () => {
  it('does not stand in the way of deleting the agent with its employees and tools', async () => {
    const agentId = await freshAgent();
    const employee = await create(agentId, { name: 'Linked', phone_number: '+4930666' }).expect(201);
    await ctx.http
      .post(`/v1/agents/${agentId}/tools`)
      .set('X-API-Key', w.key)
      .send({ name: 'to_linked', tool_type: 'transfer_call', employee_id: employee.body.id })
      .expect(201);
    await ctx.db('agents').where({ id: agentId }).delete();
    await ctx.syncCaches();
    expect(await employeeRow(employee.body.id)).toBeUndefined();
    expect(await ctx.db('tools').where({ agent_id: agentId })).toEqual([]);
  });

  it('copies a new phone number into the linked transfer tools', async () => {
    const agentId = await freshAgent();
    const employee = await create(agentId, { name: 'Linked', phone_number: '+4930444' }).expect(201);
    const tool = await ctx.http
      .post(`/v1/agents/${agentId}/tools`)
      .set('X-API-Key', w.key)
      .send({ name: 'to_linked', tool_type: 'monitored_transfer', employee_id: employee.body.id })
      .expect(201);
    expect(tool.body.config.phone_number).toBe('+4930444');
    await ctx.http
      .patch(`${base(agentId)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .send({ phone_number: '0049 40 555' })
      .expect(200);
    const after = await ctx.http.get(`/v1/agents/${agentId}/tools/${tool.body.id}`).set('X-API-Key', w.key).expect(200);
    expect(after.body.config.phone_number).toBe('+4940555');
  });

  it('refuses to remove the phone number of a linked employee with 409', async () => {
    const agentId = await freshAgent();
    const employee = await create(agentId, { name: 'Linked', phone_number: '+4930555' }).expect(201);
    await ctx.http
      .post(`/v1/agents/${agentId}/tools`)
      .set('X-API-Key', w.key)
      .send({ name: 'to_linked', tool_type: 'transfer_call', employee_id: employee.body.id })
      .expect(201);
    await ctx.http
      .patch(`${base(agentId)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .send({ phone_number: null })
      .expect(409);
    expect((await employeeRow(employee.body.id)).phone_number).toBe('+4930555');
  });
});

describe('employee access', () => {
  it('is 403 FORBIDDEN naming the missing permission, and writes nothing', async () => {
    const agentId = await freshAgent();
    const none = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['tools:read'] });
    const list = await ctx.http.get(base(agentId)).set('X-API-Key', none.key).expect(403);
    expect(list.body.error.message).toBe('Missing permission: employees:read');
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['employees:read'] });
    const res = await create(agentId, { name: 'X' }, readOnly.key).expect(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'Missing permission: employees:write' });
    expect(await ctx.db('employees').where({ agent_id: agentId })).toEqual([]);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope, and writes nothing', async () => {
    const agentId = await freshAgent();
    const existing = await create(agentId, { name: 'Keep' }).expect(201);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const res = await create(agentId, { name: 'X' }, key.key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    await ctx.http
      .patch(`${base(agentId)}/${existing.body.id}`)
      .set('X-API-Key', key.key)
      .send({ status: 'krank' })
      .expect(403);
    await ctx.http
      .delete(`${base(agentId)}/${existing.body.id}`)
      .set('X-API-Key', key.key)
      .expect(403);
    const rows = await ctx.db('employees').where({ agent_id: agentId });
    expect(rows.map((r: Employee) => [r.name, r.status])).toEqual([['Keep', 'anwesend']]);
    expect(await statusEvents(agentId)).toEqual([]);
  });

  it('is 404 for an agent of another organization and writes nothing', async () => {
    const other = await ctx.build.world();
    await create(other.agentId, { name: 'X' }).expect(404);
    await ctx.http.get(base(other.agentId)).set('X-API-Key', w.key).expect(404);
    await ctx.http.get(base(UNKNOWN)).set('X-API-Key', w.key).expect(404);
    expect(await ctx.db('employees').where({ agent_id: other.agentId })).toEqual([]);
  });

  it('is 404 for an employee of another agent, on read, update and delete, and changes nothing', async () => {
    const owner = await freshAgent();
    const other = await freshAgent();
    const employee = await create(owner, { name: 'Mine' }).expect(201);
    await ctx.http
      .get(`${base(other)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    const patch = await ctx.http
      .patch(`${base(other)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .send({ status: 'krank' })
      .expect(404);
    expect(patch.body.error.message).toBe('Employee not found');
    await ctx.http
      .delete(`${base(other)}/${employee.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    expect((await employeeRow(employee.body.id)).status).toBe('anwesend');
    expect(await statusEvents(other)).toEqual([]);
    expect(await statusEvents(owner)).toEqual([]);
  });

  it('is 400 naming the malformed path parameter', async () => {
    const a = await ctx.http.get('/v1/agents/123/employees').set('X-API-Key', w.key).expect(400);
    expect(a.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
    const b = await ctx.http
      .delete(`${base(w.agentId)}/123`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(b.body.error.details).toEqual([{ field: 'employeeId', message: 'Must be a UUID' }]);
  });
});
