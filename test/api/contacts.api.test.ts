import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContactSchema } from '../../src/modules/contacts/contact.schemas.js';
import { paginated } from '../../src/openapi/common.js';
import type { World } from '../support/builders.js';
import { describeAgentSubResource } from '../support/access-matrix.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const base = (agentId: string) => `/v1/agents/${agentId}/contacts`;

type Contact = { id: string; customer_name: string | null; [k: string]: unknown };

function create(agentId: string, body: Record<string, unknown>, key = w.key) {
  return ctx.http.post(base(agentId)).set('X-API-Key', key).send(body);
}

function patch(agentId: string, contactId: string, body: Record<string, unknown>, key = w.key) {
  return ctx.http
    .patch(`${base(agentId)}/${contactId}`)
    .set('X-API-Key', key)
    .send(body);
}

function list(agentId: string, query = '') {
  return ctx.http.get(`${base(agentId)}${query}`).set('X-API-Key', w.key);
}

async function contactRows(agentId: string) {
  return ctx.db('contacts').where({ agent_id: agentId }).orderBy('customer_name');
}

describe('POST /v1/agents/{agentId}/contacts', () => {
  it('creates a contact with 201 and returns every field', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      salutation: 'Frau',
      first_name: 'Erika',
      last_name: 'Mustermann',
      phone_number: '+49 (30) 123-456',
      email: 'erika@example.com',
      address: 'Hauptstr. 1, Berlin',
      company: 'Muster GmbH',
      tags: ['VIP'],
      note: 'Ruft oft an',
      customer_number: 'K-42',
      last_contact_date: '2026-11-20',
    }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      agent_id: agentId,
      customer_name: 'Erika Mustermann',
      salutation: 'Frau',
      first_name: 'Erika',
      last_name: 'Mustermann',
      phone_number: '+4930123456',
      mobile_number: null,
      landline_number: null,
      email: 'erika@example.com',
      address: 'Hauptstr. 1, Berlin',
      company: 'Muster GmbH',
      tags: ['VIP'],
      note: 'Ruft oft an',
      customer_number: 'K-42',
      last_contact_date: '2026-11-20T00:00:00.000Z',
      name_parsed: 'manual',
      name_source: 'manual',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it.each([
    ['+49 30 1234567', '+49301234567'],
    ['030 / 123 45-67', '+49301234567'],
    ['0049 (0)30 1234567', '+49301234567'],
    ['+49 (0) 30-1234567', '+49301234567'],
    ['[0171] 234.5678', '+491712345678'],
    ['+1 (415) 555-0100', '+14155550100'],
  ])('normalises %j to %s in all three number fields', async (input, expected) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      customer_name: 'N',
      phone_number: input,
      mobile_number: input,
      landline_number: input,
    }).expect(201);
    expect([res.body.phone_number, res.body.mobile_number, res.body.landline_number]).toEqual([
      expected,
      expected,
      expected,
    ]);
  });

  it('refuses numbers that cannot be E.164, naming each field, and writes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      customer_name: 'N',
      phone_number: '12ab',
      mobile_number: '+0123',
      landline_number: '+49 123 456 789 012 345',
    }).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'phone_number', message: 'Must be a phone number in E.164 format, e.g. +4930123456' },
      { field: 'mobile_number', message: 'Must be a phone number in E.164 format, e.g. +4930123456' },
      { field: 'landline_number', message: 'Must be a phone number in E.164 format, e.g. +4930123456' },
    ]);
    expect(await contactRows(agentId)).toEqual([]);
  });

  it('stores an empty number or text as null', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { customer_name: 'N', phone_number: '', note: '  ', company: '' }).expect(201);
    expect(res.body).toMatchObject({ phone_number: null, note: null, company: null });
  });

  it('trims tags, drops empty ones and removes case-insensitive duplicates', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      customer_name: 'T',
      tags: ['  VIP ', 'vip', '', 'Neukunde', 'NEUKUNDE', ' '],
    }).expect(201);
    expect(res.body.tags).toEqual(['VIP', 'Neukunde']);
    expect((await contactRows(agentId))[0].tags).toEqual(['VIP', 'Neukunde']);
  });

  it('refuses a contact with neither name, company, number nor email', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { note: 'who?', tags: ['x'] }).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'customer_name', message: 'A contact needs a name, a company, a phone number or an email' },
    ]);
    expect(await contactRows(agentId)).toEqual([]);
  });

  it('lists every problem of an invalid contact at once', async () => {
    const res = await create(w.agentId, {
      customer_name: 5,
      email: 'x',
      tags: 'VIP',
      last_contact_date: 'yesterday',
    }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'customer_name',
      'email',
      'last_contact_date',
      'tags',
    ]);
  });

  it('refuses a phone_number another contact of the agent has with 409', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { customer_name: 'First', phone_number: '+4930555' }).expect(201);
    const res = await create(agentId, { customer_name: 'Second', phone_number: '030 555' }).expect(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      details: [{ field: 'phone_number', message: 'Already in use' }],
    });
    expect((await contactRows(agentId)).map((c: Contact) => c.customer_name)).toEqual(['First']);
    // The same number as another contact's landline, or at another agent, is fine (a mobile
    // number becomes the contact's phone_number, so it counts as one).
    await create(agentId, { customer_name: 'Family', landline_number: '+4930555', mobile_number: '+4930556' }).expect(
      201,
    );
    await create(await ctx.build.freshAgent(w.orgId), { customer_name: 'Elsewhere', phone_number: '+4930555' }).expect(
      201,
    );
  });
});

describe('contact names', () => {
  it.each([
    [
      { first_name: 'Max', last_name: 'Mustermann' },
      { customer_name: 'Max Mustermann', first_name: 'Max', last_name: 'Mustermann' },
    ],
    [{ last_name: 'Mustermann' }, { customer_name: 'Mustermann', first_name: null, last_name: 'Mustermann' }],
    [{ customer_name: 'Max Mustermann' }, { first_name: 'Max', last_name: 'Mustermann', salutation: null }],
    [{ customer_name: 'Mustermann, Max' }, { first_name: 'Max', last_name: 'Mustermann' }],
    [{ customer_name: 'Herr Müller' }, { salutation: 'Herr', first_name: null, last_name: 'Müller' }],
    [{ customer_name: 'frau Erika Muster' }, { salutation: 'Frau', first_name: 'Erika', last_name: 'Muster' }],
    [{ customer_name: 'Anna Maria Schmidt' }, { first_name: null, last_name: null }],
    [{ customer_name: 'Cher' }, { first_name: null, last_name: null }],
    [
      { customer_name: 'Dr. M.', first_name: 'Max', last_name: 'Meier' },
      { customer_name: 'Dr. M.', first_name: 'Max', last_name: 'Meier' },
    ],
    [
      { customer_name: 'Herr Max Meier', salutation: 'Dr.' },
      { salutation: 'Dr.', first_name: 'Max', last_name: 'Meier' },
    ],
  ])('composes or splits %j into %j', async (input, expected) => {
    const res = await create(await ctx.build.freshAgent(w.orgId), input).expect(201);
    expect(res.body).toMatchObject(expected);
  });

  it('recomposes the name when a part changes and re-splits it when the name changes', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await create(agentId, { customer_name: 'Max Mustermann', salutation: 'Herr' }).expect(201);
    const renamed = await patch(agentId, created.body.id, { first_name: 'Moritz' }).expect(200);
    expect(renamed.body).toMatchObject({
      customer_name: 'Moritz Mustermann',
      first_name: 'Moritz',
      last_name: 'Mustermann',
      salutation: 'Herr',
    });
    const split = await patch(agentId, created.body.id, { customer_name: 'Erika Musterfrau' }).expect(200);
    expect(split.body).toMatchObject({
      customer_name: 'Erika Musterfrau',
      first_name: 'Erika',
      last_name: 'Musterfrau',
      salutation: 'Herr',
    });
    const ambiguous = await patch(agentId, created.body.id, { customer_name: 'Anna Maria Schmidt' }).expect(200);
    expect(ambiguous.body).toMatchObject({ customer_name: 'Anna Maria Schmidt', first_name: null, last_name: null });
  });
});

describe('PATCH /v1/agents/{agentId}/contacts/{contactId}', () => {
  it('changes the given fields, clears with null, ignores unknown fields', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await create(agentId, {
      customer_name: 'A B',
      phone_number: '+4930111',
      note: 'n',
      tags: ['x'],
    }).expect(201);
    ctx.clock.advance(1000);
    const res = await patch(agentId, created.body.id, {
      note: null,
      tags: ['Y', 'y'],
      mobile_number: '0171 1234567',
      id: UNKNOWN,
      bogus: 1,
    }).expect(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      agent_id: agentId,
      customer_name: 'A B',
      // A mobile number sent re-derives phone_number.
      phone_number: '+491711234567',
      mobile_number: '+491711234567',
      note: null,
      tags: ['Y'],
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(created.body.updated_at).getTime());
  });

  it('refuses to give a contact the phone_number of another with 409 and changes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { customer_name: 'A', phone_number: '+4930111' }).expect(201);
    const b = await create(agentId, { customer_name: 'B', phone_number: '+4930222' }).expect(201);
    await patch(agentId, b.body.id, { phone_number: '+4930111', customer_name: 'Changed' }).expect(409);
    expect((await contactRows(agentId)).map((c: Contact) => [c.customer_name, c.phone_number])).toEqual([
      ['A', '+4930111'],
      ['B', '+4930222'],
    ]);
    await patch(agentId, b.body.id, { phone_number: '+4930222', note: 'own number again' }).expect(200);
  });

  it('refuses to leave a contact with nothing to identify it', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await create(agentId, { customer_name: 'Only Name' }).expect(201);
    await patch(agentId, created.body.id, { customer_name: null }).expect(400);
    expect((await contactRows(agentId))[0].customer_name).toBe('Only Name');
  });
});

describe('GET /v1/agents/{agentId}/contacts', () => {
  it('lists newest first with pagination', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    for (const name of ['Old', 'Middle', 'New']) {
      await create(agentId, { customer_name: name }).expect(201);
      ctx.clock.advance(1000);
    }
    const res = await list(agentId, '?limit=2').expect(200);
    expect(res.body.data.map((c: Contact) => c.customer_name)).toEqual(['New', 'Middle']);
    expect(res.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
    const page2 = await list(agentId, '?limit=2&page=2').expect(200);
    expect(page2.body.data.map((c: Contact) => c.customer_name)).toEqual(['Old']);
  });

  it('filters by a phone number matching any of the three numbers, in any written form', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { customer_name: 'Mobile', mobile_number: '+4930111' }).expect(201);
    await create(agentId, { customer_name: 'Landline', mobile_number: '+4930555', landline_number: '+4930111' }).expect(
      201,
    );
    await create(agentId, { customer_name: 'Other', phone_number: '+4930999' }).expect(201);
    const res = await list(agentId, `?phone_number=${encodeURIComponent('030 111')}`).expect(200);
    expect(res.body.data.map((c: Contact) => c.customer_name).sort()).toEqual(['Landline', 'Mobile']);
  });

  it('filters by tag case-insensitively', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { customer_name: 'A', tags: ['VIP'] }).expect(201);
    await create(agentId, { customer_name: 'B', tags: ['vip', 'neu'] }).expect(201);
    await create(agentId, { customer_name: 'C', tags: ['VIPER'] }).expect(201);
    const res = await list(agentId, '?tag=Vip').expect(200);
    expect(res.body.data.map((c: Contact) => c.customer_name).sort()).toEqual(['A', 'B']);
  });

  it('searches names, company, email, customer number and numbers case-insensitively, with wildcards taken literally', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { customer_name: 'Erika Mustermann' }).expect(201);
    await create(agentId, { customer_name: 'X', company: 'Muster GmbH' }).expect(201);
    await create(agentId, { customer_name: 'Y', email: 'info@mUSTer.de' }).expect(201);
    await create(agentId, { customer_name: 'Z', customer_number: '100%_sure' }).expect(201);
    await create(agentId, { customer_name: 'Nobody', phone_number: '+4940123' }).expect(201);
    const muster = await list(agentId, '?search=muster').expect(200);
    expect(muster.body.data.map((c: Contact) => c.customer_name).sort()).toEqual(['Erika Mustermann', 'X', 'Y']);
    const percent = await list(agentId, `?search=${encodeURIComponent('%_')}`).expect(200);
    expect(percent.body.data.map((c: Contact) => c.customer_name)).toEqual(['Z']);
    const phone = await list(agentId, '?search=40123').expect(200);
    expect(phone.body.data.map((c: Contact) => c.customer_name)).toEqual(['Nobody']);
  });

  it.each([
    ['phone_number=abc', 'phone_number'],
    ['search=', 'search'],
    ['page=0', 'page'],
  ])('refuses %s with a 400 naming %s', async (query, field) => {
    const res = await list(w.agentId, `?${query}`).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  });
});

describeAgentSubResource(
  {
    segment: 'contacts',
    noun: 'Contact',
    idParam: 'contactId',
    read: 'contacts:read',
    write: 'contacts:write',
    itemSchema: ContactSchema,
    listSchema: paginated(ContactSchema),
    createBody: () => ({ customer_name: 'Generated', phone_number: ctx.build.phone() }),
    bodies: { patch: { customer_name: 'Changed' } },
    state: (agentId) => ctx.db('contacts').where({ agent_id: agentId }).orderBy('id'),
    memberReads: true,
  },
  () => ({ ctx, w }),
);
