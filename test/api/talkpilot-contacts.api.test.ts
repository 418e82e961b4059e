import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { ContactSchema } from '../../src/modules/contacts/contact.schemas.js';

// TalkPilot's contact bodies (CRM sync scripts) and the answers they read.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const contacts = (agentId: string) => `/v1/agents/${agentId}/contacts`;
const create = (agentId: string, body: object) => ctx.http.post(contacts(agentId)).set('X-API-Key', w.key).send(body);
const patch = (agentId: string, id: string, body: object) =>
  ctx.http
    .patch(`${contacts(agentId)}/${id}`)
    .set('X-API-Key', w.key)
    .send(body);

describe('TalkPilot contact fields', () => {
  it('accepts a numeric customer_number, a date-time last_contact_date and tags: null', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      customer_name: 'Tobias Lutz',
      mobile_number: '+491701234567',
      customer_number: 10042,
      last_contact_date: '2026-11-20T14:30:00+01:00',
      tags: null,
    }).expect(201);
    expectSchema(res, ContactSchema);
    expect(res.body).toMatchObject({
      customer_number: 10042,
      last_contact_date: '2026-11-20T13:30:00.000Z',
      tags: [],
    });
    const got = await ctx.http
      .get(`${contacts(agentId)}/${res.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expectSchema(got, ContactSchema);
    expect(got.body.customer_number).toBe(10042);
  });

  it('derives phone_number from the mobile number, else the landline, and again on update', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const landline = await create(agentId, { customer_name: 'Herr Fey', landline_number: '+4922112345' }).expect(201);
    expect(landline.body.phone_number).toBe('+4922112345');
    const both = await create(agentId, {
      customer_name: 'Frau Weber',
      landline_number: '+4922199999',
      mobile_number: '+491709999999',
    }).expect(201);
    expect(both.body.phone_number).toBe('+491709999999');
    const updated = await patch(agentId, landline.body.id, { mobile_number: '+491701111111' }).expect(200);
    expectSchema(updated, ContactSchema);
    expect(updated.body).toMatchObject({ phone_number: '+491701111111', landline_number: '+4922112345' });
  });

  it('composes customer_name with the salutation when there is no first name', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const fey = await create(agentId, { salutation: 'Herr', last_name: 'Fey', phone_number: '+4930111' }).expect(201);
    expect(fey.body).toMatchObject({ customer_name: 'Herr Fey', name_parsed: 'manual', name_source: 'manual' });
    const lutz = await create(agentId, { first_name: 'Tobias', last_name: 'Lutz' }).expect(201);
    expect(lutz.body.customer_name).toBe('Tobias Lutz');
    const renamed = await patch(agentId, fey.body.id, { salutation: 'Frau' }).expect(200);
    expect(renamed.body.customer_name).toBe('Frau Fey');
    const first = await patch(agentId, fey.body.id, { first_name: 'Max' }).expect(200);
    expect(first.body).toMatchObject({ customer_name: 'Max Fey', salutation: 'Frau', last_name: 'Fey' });
  });

  it('reports name_parsed: auto for a name it could split, unclear for one it could not', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const auto = await create(agentId, { customer_name: 'Tobias Lutz' }).expect(201);
    expect(auto.body).toMatchObject({ first_name: 'Tobias', last_name: 'Lutz', name_parsed: 'auto' });
    const herr = await create(agentId, { customer_name: 'Herr Fey' }).expect(201);
    expect(herr.body).toMatchObject({ salutation: 'Herr', last_name: 'Fey', name_parsed: 'auto' });
    const unclear = await create(agentId, { customer_name: 'Müller & Söhne Sanitär GmbH' }).expect(201);
    expect(unclear.body).toMatchObject({ name_parsed: 'unclear', name_source: 'manual' });
    const cleared = await patch(agentId, auto.body.id, { customer_name: null, email: 'x@example.com' }).expect(200);
    expect(cleared.body).toMatchObject({
      customer_name: null,
      first_name: null,
      last_name: null,
      name_parsed: 'unclear',
    });
  });

  it('ignores name_parsed and name_source sent by the client', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      customer_name: 'Tobias Lutz',
      name_parsed: 'llm',
      name_source: 'ai',
    }).expect(201);
    expect(res.body).toMatchObject({ name_parsed: 'auto', name_source: 'manual' });
  });

  it.each([
    [{ customer_number: -1 }, 'customer_number'],
    [{ customer_number: 1.5 }, 'customer_number'],
    [{ last_contact_date: 'gestern' }, 'last_contact_date'],
    [{ phone_number: '+4922112345678901' }, 'phone_number'],
  ])('refuses %j naming the field', async (body, field) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { customer_name: 'X', ...body }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });
});
