import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { GreetingPreviewSchema } from '../../src/modules/agents/greeting-preview.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const variants = [
  { greeting: 'Guten Morgen {{anrede}} {{nachname}}!', tag: 'VIP', from: '06:00', to: '11:00' },
  { greeting: 'Hallo {{vorname}}, schön, dass Sie wieder anrufen', min_calls_today: 2 },
  { greeting: 'Hallo {{vorname}}', tag: 'vip' },
  { greeting: 'Gute Nacht', from: '22:00', to: '06:00' },
];

async function greetingAgent() {
  const agent = await ctx.build.agent(w.orgId, {
    greeting: 'Guten Tag, {{firma}} am Apparat',
    greeting_variants: JSON.stringify(variants),
  });
  await ctx.db('contacts').insert({
    agent_id: agent.id,
    organization_id: w.orgId,
    first_name: 'Anna',
    last_name: 'Schmidt',
    salutation: 'Frau',
    mobile_number: '+4917612345678',
    tags: ['vip'],
  });
  return agent.id;
}

const preview = (id: string, body: unknown, key = w.key) =>
  ctx.http
    .post(`/v1/agents/${id}/greeting/preview`)
    .set('X-API-Key', key)
    .send(body as object);

describe('POST /v1/agents/{agentId}/greeting/preview', () => {
  it("finds the caller's contact by any of its numbers and takes the first matching variant", async () => {
    const id = await greetingAgent();
    const res = await preview(id, { caller_phone: '+49 176 1234-5678', at: '2026-11-23T08:00:00Z' }).expect(200);
    expectSchema(res, GreetingPreviewSchema);
    expect(res.body).toMatchObject({
      agent_id: id,
      at: '2026-11-23T08:00:00.000Z',
      local_time: '09:00',
      caller_phone: '+4917612345678',
      contact: { first_name: 'Anna', last_name: 'Schmidt', salutation: 'Frau', tags: ['vip'] },
      calls_today: 0,
      calls_today_source: 'calls',
      greeting: 'Guten Morgen Frau Schmidt!',
      source: 'variant',
      variant_index: 0,
    });
    expect(res.body.variants.map((v: { matched: boolean }) => v.matched)).toEqual([true, false, true, false]);
  });

  it('explains why earlier variants did not match', async () => {
    const id = await greetingAgent();
    const res = await preview(id, { caller_phone: '+4917612345678', at: '2026-11-23T13:00:00Z' }).expect(200);
    expect(res.body).toMatchObject({ greeting: 'Hallo Anna', variant_index: 2, local_time: '14:00' });
    expect(res.body.variants[0].reasons).toEqual(['14:00 is outside 06:00-11:00 (Europe/Berlin)']);
    expect(res.body.variants[1].reasons).toEqual(['0 calls today, fewer than 2']);
  });

  it("counts the caller's calls of today (Europe/Berlin) from the calls the telephony layer reported", async () => {
    const id = await greetingAgent();
    const intake = (callId: string) =>
      ctx.http
        .post(`/v1/agents/${id}/calls`)
        .set('X-API-Key', w.key)
        .send({ call_id: callId, phone_number: '+49 176 12345678', duration: 42 })
        .expect(201);
    await intake(`first-${id}`);
    const one = await preview(id, { caller_phone: '+4917612345678' }).expect(200);
    expect(one.body).toMatchObject({ calls_today: 1, calls_today_source: 'calls' });
    await intake(`second-${id}`);
    const two = await preview(id, { caller_phone: '+4917612345678', at: ctx.clock.now().toISOString() }).expect(200);
    expect(two.body.calls_today).toBe(2);
    expect(two.body.variants[1]).toMatchObject({ matched: true });
  });

  it('uses calls_today from the request', async () => {
    const id = await greetingAgent();
    const res = await preview(id, {
      caller_phone: '+4917612345678',
      at: '2026-11-23T13:00:00Z',
      calls_today: 2,
    }).expect(200);
    expect(res.body).toMatchObject({ variant_index: 1, calls_today: 2, calls_today_source: 'request' });
  });

  it('uses the clock when no time is given, in Europe/Berlin, wrapping past midnight', async () => {
    const id = await greetingAgent();
    ctx.clock.set('2026-07-01T22:30:00Z'); // 00:30 CEST
    const res = await preview(id, {}).expect(200);
    expect(res.body).toMatchObject({
      greeting: 'Gute Nacht',
      variant_index: 3,
      local_time: '00:30',
      contact: null,
      caller_phone: null,
    });
  });

  it('speaks the default greeting with the variables when no variant matches', async () => {
    const id = await greetingAgent();
    const res = await preview(id, {
      caller_phone: '+4930999999',
      at: '2026-11-23T13:00:00Z',
      variables: { firma: 'Acme' },
    }).expect(200);
    expect(res.body).toMatchObject({
      greeting: 'Guten Tag, Acme am Apparat',
      source: 'default',
      variant_index: null,
      missing_placeholders: [],
    });
  });

  it('does not use a contact of another agent', async () => {
    const id = await greetingAgent();
    const other = await ctx.build.agent(w.orgId);
    await ctx.db('contacts').insert({
      agent_id: other.id,
      organization_id: w.orgId,
      first_name: 'Bernd',
      phone_number: '+4930555555',
      tags: ['vip'],
    });
    const res = await preview(id, { caller_phone: '+4930555555', at: '2026-11-23T13:00:00Z' }).expect(200);
    expect(res.body).toMatchObject({ contact: null, source: 'default' });
  });

  it('has no greeting for an agent without one', async () => {
    const res = await preview(w.agentId, {}).expect(200);
    expect(res.body).toMatchObject({ greeting: null, source: 'none', variants: [] });
  });

  it.each([
    [{ at: 'tomorrow' }, 'at'],
    [{ caller_phone: '0176 123' }, 'caller_phone'],
    [{ calls_today: -1 }, 'calls_today'],
    [{ variables: { firma: { name: 'x' } } }, 'variables.firma'],
    [{ tag: 'vip' }, 'tag'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await preview(w.agentId, body).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  describe('access', () => {
    it('is 403 FORBIDDEN naming agents:read for a key without it', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
      expect((await preview(w.agentId, {}, key.key).expect(403)).body.error.message).toBe(
        'API key lacks required permission: agents:read',
      );
    });

    it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
      expect((await preview(w.agentId, {}, key.key).expect(403)).body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    });

    it('is 404 for an agent of another organization', async () => {
      const other = await ctx.build.world();
      await preview(other.agentId, {}).expect(404);
    });

    it('is 400 naming agentId when it is not a UUID', async () => {
      expect((await preview('x', {}).expect(400)).body.error.details).toEqual([
        { field: 'agentId', message: 'Must be a UUID' },
      ]);
    });
  });
});
