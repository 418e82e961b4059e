import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/auth/permissions.js';
import { GreetingPreviewSchema } from '../../src/modules/agents/greeting-preview.schemas.js';
import { SimulationSchema, TestRunSchema } from '../../src/modules/simulation/simulation.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

// Simulate, greeting preview, test-case runs and suggestions show the caller's contact only with
// contacts:read and the caller's calls of today only with calls:read (agents:read alone shows neither).

let ctx: TestContext;
let w: World;
const keys: Record<'reader' | 'contacts' | 'calls' | 'full', string> = {
  reader: '',
  contacts: '',
  calls: '',
  full: '',
};
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const key = async (permissions: Permission[]) => (await ctx.build.apiKey(w.orgId, w.userId, { permissions })).key;
  keys.reader = await key(['agents:read']);
  keys.contacts = await key(['agents:read', 'contacts:read']);
  keys.calls = await key(['agents:read', 'calls:read']);
  keys.full = await key(['agents:read', 'contacts:read', 'calls:read']);
});
afterAll(() => ctx.close());

const ANNA = '+4917612345678';
const variants = [
  { greeting: 'Hallo {{vorname}}, schön, dass Sie wieder anrufen', min_calls_today: 1 },
  { greeting: 'Guten Tag {{anrede}} {{nachname}}', tag: 'vip' },
];
/** What gives the contact away in an answer: its names and its id (the tag also stands in the agent's variants). */
const contactTraces = (contactId: string) => ['Anna', 'Schmidt', 'Frau', contactId];

/** An always-open agent whose greeting reads the contact and the calls of today; Anna called once today. */
async function greetingAgent() {
  const agent = await ctx.build.agent(w.orgId, {
    greeting: 'Guten Tag, Praxis Müller',
    greeting_variants: JSON.stringify(variants),
  });
  const [contact] = await ctx
    .db('contacts')
    .insert({
      agent_id: agent.id,
      organization_id: w.orgId,
      first_name: 'Anna',
      last_name: 'Schmidt',
      salutation: 'Frau',
      mobile_number: ANNA,
      tags: ['vip'],
    })
    .returning('id');
  await ctx.http
    .post(`/v1/agents/${agent.id}/calls`)
    .set('X-API-Key', w.key)
    .send({ call_id: `call-${agent.id}`, phone_number: ANNA, duration: 42 })
    .expect(201);
  return { id: agent.id, contactId: contact.id as string };
}

const post = (path: string, body: object, key: string) => ctx.http.post(path).set('X-API-Key', key).send(body);

describe('POST /v1/agents/{agentId}/greeting/preview', () => {
  it('shows the contact only with contacts:read and calls_today only with calls:read', async () => {
    const { id, contactId } = await greetingAgent();
    const preview = (key: string) => post(`/v1/agents/${id}/greeting/preview`, { caller_phone: ANNA }, key).expect(200);

    const reader = await preview(keys.reader);
    expectSchema(reader, GreetingPreviewSchema);
    expect(reader.body).toMatchObject({ contact: null, calls_today: null, greeting: 'Guten Tag, Praxis Müller' });
    for (const trace of contactTraces(contactId)) expect(JSON.stringify(reader.body)).not.toContain(trace);

    const contacts = (await preview(keys.contacts)).body;
    expect(contacts).toMatchObject({
      contact: { id: contactId, first_name: 'Anna', last_name: 'Schmidt', salutation: 'Frau', tags: ['vip'] },
      calls_today: null,
      greeting: 'Guten Tag Frau Schmidt',
    });

    const calls = (await preview(keys.calls)).body;
    expect(calls).toMatchObject({ contact: null, calls_today: 1, greeting: 'Guten Tag, Praxis Müller' });
    for (const trace of contactTraces(contactId)) expect(JSON.stringify(calls)).not.toContain(trace);

    const full = (await preview(keys.full)).body;
    expect(full).toMatchObject({
      contact: { id: contactId, first_name: 'Anna' },
      calls_today: 1,
      calls_today_source: 'calls',
      greeting: 'Hallo Anna, schön, dass Sie wieder anrufen',
    });
  });

  it("echoes a calls_today the request gives, which is the requester's own", async () => {
    const { id } = await greetingAgent();
    const res = await post(`/v1/agents/${id}/greeting/preview`, { caller_phone: ANNA, calls_today: 3 }, keys.reader);
    expect(res.body).toMatchObject({ contact: null, calls_today: 3, calls_today_source: 'request' });
  });
});

describe('POST /v1/agents/{agentId}/simulate', () => {
  it('simulates the caller as unknown without contacts:read and without calls today without calls:read', async () => {
    const { id, contactId } = await greetingAgent();
    const simulate = (key: string) => post(`/v1/agents/${id}/simulate`, { caller_number: ANNA }, key).expect(200);

    const reader = await simulate(keys.reader);
    expectSchema(reader, SimulationSchema);
    expect(reader.body).toMatchObject({ contact: null, greeting: { text: 'Guten Tag, Praxis Müller' } });
    for (const trace of contactTraces(contactId)) expect(JSON.stringify(reader.body)).not.toContain(trace);

    expect((await simulate(keys.contacts)).body).toMatchObject({
      contact: { id: contactId, name: 'Anna Schmidt' },
      greeting: { text: 'Guten Tag Frau Schmidt', variant_index: 1 },
    });
    expect((await simulate(keys.calls)).body).toMatchObject({
      contact: null,
      greeting: { text: 'Guten Tag, Praxis Müller', variant_index: null },
    });
    expect((await simulate(keys.full)).body).toMatchObject({
      contact: { id: contactId, name: 'Anna Schmidt' },
      greeting: { text: 'Hallo Anna, schön, dass Sie wieder anrufen', variant_index: 0 },
    });
  });
});

describe('test-case runs and suggestions', () => {
  it('gives every reader the same verdicts, and the greeting only to who may read what chose it', async () => {
    const { id, contactId } = await greetingAgent();
    const at = ctx.clock.now().toISOString();
    const save = (name: string, greeting: string) =>
      post(
        `/v1/agents/${id}/test-cases`,
        { name, input: { at, caller_number: ANNA }, expect: { greeting_contains: greeting } },
        w.key,
      ).expect(201);
    const passing = (await save('Anna wird erkannt', 'Hallo Anna')).body.id;
    const failing = (await save('Falsch erwartet', 'Servus')).body.id;
    const run = async (key: string) => {
      const res = await post(`/v1/agents/${id}/test-cases/run`, {}, key).expect(200);
      expectSchema(res, TestRunSchema);
      return res.body as { passed: number; results: { id: string; mismatches: { actual: unknown }[] }[] };
    };
    const actualOf = (body: Awaited<ReturnType<typeof run>>) =>
      body.results.find((r) => r.id === failing)!.mismatches[0]!.actual;

    const full = await run(keys.full);
    expect(full.passed).toBe(1);
    expect(full.results.find((r) => r.id === passing)!.mismatches).toEqual([]);
    expect(actualOf(full)).toBe('Hallo Anna, schön, dass Sie wieder anrufen');
    for (const key of [keys.reader, keys.contacts, keys.calls]) {
      const body = await run(key);
      expect(body.passed).toBe(1);
      expect(actualOf(body)).toBeNull();
      expect(JSON.stringify(body)).not.toContain('Anna,');
      expect(JSON.stringify(body)).not.toContain(contactId);
    }
  });

  it("pins the known caller's greeting only when the requester may read what chose it", async () => {
    const { id } = await greetingAgent();
    const suggest = async (key: string) => {
      const res = await post(`/v1/agents/${id}/test-cases/suggest`, {}, key).expect(200);
      return (res.body.data as { input: { caller_number?: string }; expect: Record<string, unknown> }[]).find(
        (c) => c.input.caller_number === ANNA,
      );
    };
    expect(await suggest(keys.reader)).toBeUndefined();
    expect(await suggest(keys.calls)).toBeUndefined();
    const withoutCalls = await suggest(keys.contacts);
    expect(withoutCalls).toBeDefined();
    expect(withoutCalls!.expect.greeting_contains).toBeUndefined();
    expect((await suggest(keys.full))!.expect.greeting_contains).toMatch(/Frau Schmidt|Hallo Anna/);
  });
});
