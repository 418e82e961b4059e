import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as normalizeCallerNumbers } from '../../migrations/20261129034500_normalize_caller_numbers.js';
import { DataSubjectErasureSchema } from '../../src/modules/privacy/data-subject.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

// Erasure finds every copy of a person: numbers in any stored form, calls without a number that
// carry the name or address, outcomes outside the allow-list, saved test cases, knowledge base.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const erase = (w: World, body: object) =>
  ctx.http.post(`/v1/organization/${w.orgId}/data-subjects/erase`).set('X-API-Key', w.key).send(body);

let seq = 0;
async function call(w: World, fields: Record<string, unknown>) {
  const res = await ctx.http
    .post(`/v1/agents/${w.agentId}/calls`)
    .set('X-API-Key', w.key)
    .send({ call_id: `erasure-${++seq}-${randomUUID()}`, duration: 60, ...fields })
    .expect(201);
  return res.body as { id: string; phone_number: string | null };
}

async function contact(w: World, fields: Record<string, unknown>) {
  const res = await ctx.http
    .post(`/v1/agents/${w.agentId}/contacts`)
    .set('X-API-Key', w.key)
    .send({ customer_name: 'Anna Schmidt', first_name: 'Anna', last_name: 'Schmidt', ...fields })
    .expect(201);
  return res.body as { id: string };
}

async function fields(w: World, analysis_fields: object[]) {
  await ctx.http.patch(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).send({ analysis_fields }).expect(200);
}

const callRow = (id: string) => ctx.db('calls').where({ id }).first();
const eventOf = async (callId: string) =>
  (await ctx.db('events').where({ type: 'call.completed' }).whereRaw(`payload->'call'->>'id' = ?`, [callId]).first())
    .payload.call;

describe('caller numbers at intake', () => {
  it('stores every written form of a valid number as E.164, so one erasure finds them all', async () => {
    const w = await ctx.build.world();
    const forms = ['49301234567', '030/1234567', '0049 30 1234567', '+49 (0)30 123-4567'];
    const calls = [];
    for (const phone_number of forms) calls.push(await call(w, { phone_number, customer_name: 'Kunde' }));
    expect(calls.map((c) => c.phone_number)).toEqual(forms.map(() => '+49301234567'));
    const kept = await call(w, { phone_number: 'anonymous' });
    expect(kept.phone_number).toBe('anonymous');
    const listed = await ctx.http
      .get(`/v1/agents/${w.agentId}/calls?phone_number=${encodeURIComponent('030 1234567')}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(listed.body.data).toHaveLength(4);

    const res = await erase(w, { phone_number: '030 1234567' }).expect(200);
    expect(res.body.erased.calls).toBe(4);
    for (const c of calls) expect(await callRow(c.id)).toMatchObject({ phone_number: null, customer_name: null });
    for (const c of calls) expect((await eventOf(c.id)).phone_number).toBeNull();
  });

  it('a migration brings stored calls and call.completed bodies to E.164 and leaves invalid numbers', async () => {
    const w = await ctx.build.world();
    const written = ['030/1234567', '49301234567', '0049301234567', 'anonymous', '+49301234567'];
    const ids = [];
    for (const phone_number of written) {
      const c = await call(w, { phone_number: '+49 30 7654321' });
      await ctx.db('calls').where({ id: c.id }).update({ phone_number });
      await ctx
        .db('events')
        .whereRaw(`payload->'call'->>'id' = ?`, [c.id])
        .update({
          payload: ctx.db.raw(`jsonb_set(payload, '{call,phone_number}', to_jsonb(?::text))`, [phone_number]),
        });
      ids.push(c.id);
    }
    await normalizeCallerNumbers(ctx.db);
    const stored = await Promise.all(ids.map(async (id) => (await callRow(id)).phone_number));
    const e164 = '+49301234567';
    expect(stored).toEqual([e164, e164, e164, 'anonymous', e164]);
    const bodies = await Promise.all(ids.map(async (id) => (await eventOf(id)).phone_number));
    expect(bodies).toEqual([e164, e164, e164, 'anonymous', e164]);
  });
});

describe('erasure by address and full name', () => {
  it('finds calls without a number that carry the name or the address in any free-text field, and their bodies', async () => {
    const w = await ctx.build.world();
    await fields(w, [{ name: 'rueckruf_an', type: 'string' }]);
    await contact(w, { phone_number: '+49 170 1112223', email: 'anna@example.com' });
    const found = [
      await call(w, { customer_name: 'anna schmidt' }),
      await call(w, { transcript: [{ role: 'user', text: 'Schreiben Sie an ANNA@example.com' }] }),
      await call(w, { call_summary: 'Frau Anna Schmidt möchte einen Termin' }),
      await call(w, { note: 'Rückruf an Anna Schmidt' }),
      await call(w, { extracted_data: { rueckruf_an: 'anna@example.com' } }),
    ];
    // A first name alone names too many people.
    const other = await call(w, { customer_name: 'Anna Meier', call_summary: 'Anna ruft an' });
    await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .set('Idempotency-Key', 'intake-anna-schmidt')
      .send({ call_id: `idem-${randomUUID()}`, duration: 30, customer_name: 'Anna Schmidt' })
      .expect(201);

    // The note is no part of the call.completed body: five of the six bodies name the person.
    const dry = await erase(w, { email: 'anna@example.com', dry_run: true }).expect(200);
    const counts = { contacts: 1, calls: 6, webhook_deliveries: 5, idempotency_records: 1 };
    expect(dry.body.erased).toMatchObject(counts);
    const res = await erase(w, { email: 'anna@example.com' }).expect(200);
    expect(res.body.erased).toMatchObject(counts);
    expect(await ctx.db('idempotency_keys').where({ idempotency_key: 'intake-anna-schmidt' })).toEqual([]);
    for (const c of found) {
      const row = await callRow(c.id);
      expect(row).toMatchObject({ customer_name: null, call_summary: null, note: null, transcript: null });
      expect(row.extracted_data).toEqual({});
      expect(JSON.stringify(await eventOf(c.id))).not.toMatch(/anna/i);
    }
    expect(await callRow(other.id)).toMatchObject({ customer_name: 'Anna Meier', call_summary: 'Anna ruft an' });
    expect((await eventOf(other.id)).customer_name).toBe('Anna Meier');
  });
});

describe('stored bodies whose agent was deleted', () => {
  it('are found by the name or address in their text and redacted', async () => {
    const w = await ctx.build.world();
    await contact(w, { phone_number: '+49 170 5550001', email: 'anna@example.com' });
    const gone = (await ctx.build.agent(w.orgId, { name: 'Alt' })).id;
    const res = await ctx.http
      .post(`/v1/agents/${gone}/calls`)
      .set('X-API-Key', w.key)
      .send({ call_id: `gone-${randomUUID()}`, duration: 30, call_summary: 'Rückruf an anna@example.com' })
      .expect(201);
    await ctx.http.delete(`/v1/agents/${gone}`).set('X-API-Key', w.key).expect(204);
    expect(await callRow(res.body.id)).toBeUndefined();
    expect((await eventOf(res.body.id)).call_summary).toBe('Rückruf an anna@example.com');

    const erased = await erase(w, { email: 'anna@example.com' }).expect(200);
    expect(erased.body.erased).toMatchObject({ calls: 0, webhook_deliveries: 1 });
    expect((await eventOf(res.body.id)).call_summary).toBeNull();
  });
});

describe('erased outcomes: an allow-list', () => {
  it('keeps only declared enum and boolean values; dates, numbers, strings and keys no longer declared go', async () => {
    const w = await ctx.build.world();
    await fields(w, [
      { name: 'kategorie', type: 'enum', values: ['heizung', 'wasser'] },
      { name: 'notfall', type: 'boolean' },
      { name: 'geburtstag', type: 'date' },
      { name: 'hausnummer', type: 'number' },
      { name: 'alt', type: 'boolean' },
    ]);
    const outcome = { kategorie: 'heizung', notfall: true, geburtstag: '1980-12-24', hausnummer: 12, alt: false };
    const mine = await call(w, { phone_number: '+49 171 4445556', extracted_data: outcome });
    // `alt` is no longer declared: its stored values are no outcome the erasure can vouch for.
    await fields(w, [
      { name: 'kategorie', type: 'enum', values: ['heizung', 'wasser'] },
      { name: 'notfall', type: 'boolean' },
      { name: 'geburtstag', type: 'date' },
      { name: 'hausnummer', type: 'number' },
    ]);
    await erase(w, { phone_number: '+491714445556' }).expect(200);
    const kept = { kategorie: 'heizung', notfall: true };
    expect((await callRow(mine.id)).extracted_data).toEqual(kept);
    expect((await eventOf(mine.id)).extracted_data).toEqual(kept);
  });
});

describe("erasure and the person's saved test cases", () => {
  const at = '2026-11-30T10:00:00+01:00';
  const create = (w: World, body: object) =>
    ctx.http.post(`/v1/agents/${w.agentId}/test-cases`).set('X-API-Key', w.key).send(body).expect(201);

  it('removes their number and greeting from cases, deletes cases left empty or named after them', async () => {
    const w = await ctx.build.world();
    await contact(w, { phone_number: '+49 170 7778889' });
    const stripped = await create(w, {
      name: 'Bekannter Anrufer',
      input: { at, caller_number: '+491707778889' },
      expect: { accepting_calls: true, greeting_contains: 'Hallo Anna' },
    });
    const greetingOnly = await create(w, {
      name: 'Begrüßung',
      input: { at, caller_number: '+491707778889' },
      expect: { greeting_contains: 'Guten Tag Frau Schmidt' },
    });
    const named = await create(w, {
      name: 'Anruf von Anna Schmidt',
      input: { at },
      expect: { accepting_calls: true },
    });
    // Another caller whose greeting names someone else, and a case without a caller.
    const otherCaller = await create(w, {
      name: 'Stammkunde',
      input: { at, caller_number: '+491709990001' },
      expect: { greeting_contains: 'Hallo Bernd' },
    });
    // Names are matched as whole words: Annabell is someone else.
    const similar = await create(w, {
      name: 'Stammkundin',
      input: { at, caller_number: '+491709990002' },
      expect: { greeting_contains: 'Hallo Annabell' },
    });
    const noCaller = await create(w, { name: 'Montag offen', input: { at }, expect: { accepting_calls: true } });

    const dry = await erase(w, { phone_number: '+491707778889', dry_run: true }).expect(200);
    expect(dry.body.erased.test_cases).toBe(3);
    const res = await erase(w, { phone_number: '+491707778889' }).expect(200);
    expectSchema(res, DataSubjectErasureSchema);
    expect(res.body.erased.test_cases).toBe(3);
    const rows = await ctx.db('agent_test_cases').where({ agent_id: w.agentId });
    const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(stripped.body.id)).toMatchObject({ input: { at }, expect: { accepting_calls: true } });
    expect(byId.has(greetingOnly.body.id)).toBe(false);
    expect(byId.has(named.body.id)).toBe(false);
    expect(byId.get(otherCaller.body.id)).toMatchObject({
      input: { at, caller_number: '+491709990001' },
      expect: { greeting_contains: 'Hallo Bernd' },
    });
    expect(byId.has(noCaller.body.id)).toBe(true);
    expect(byId.get(similar.body.id)).toMatchObject({ expect: { greeting_contains: 'Hallo Annabell' } });
    expect(JSON.stringify(rows)).not.toMatch(/7778889|Schmidt|Hallo Anna\b/);
  });
});

describe('knowledge-base documents that mention the person', () => {
  it('are listed as kb_documents_to_review in the dry run and the erasure, and left unchanged', async () => {
    const w = await ctx.build.world();
    await contact(w, { phone_number: '+49 170 3334445', email: 'anna@example.com' });
    const doc = (title: string, content: string) =>
      ctx.http
        .post(`/v1/agents/${w.agentId}/knowledge-base`)
        .set('X-API-Key', w.key)
        .send({ title, content })
        .expect(201);
    const byName = await doc('Stammkunden', 'Frau Anna Schmidt bekommt 10 % Rabatt.');
    const byMail = await doc('Rechnungen', 'Rechnungen an ANNA@example.com schicken.');
    await doc('Öffnungszeiten', 'Montag bis Freitag 8 bis 17 Uhr, Anna ist am Empfang.');

    const dry = await erase(w, { phone_number: '+491703334445', dry_run: true }).expect(200);
    // Oldest first; the two were created at the same instant of the test clock, so their order is by id.
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    const listed = [
      { id: byName.body.id, agent_id: w.agentId, title: 'Stammkunden' },
      { id: byMail.body.id, agent_id: w.agentId, title: 'Rechnungen' },
    ].sort(byId);
    expect(dry.body.kb_documents_to_review).toEqual(listed);
    const res = await erase(w, { phone_number: '+491703334445' }).expect(200);
    expect(res.body.kb_documents_to_review).toEqual(listed);
    expect((await ctx.db('kb_documents').where({ id: byName.body.id }).first()).content).toBe(
      'Frau Anna Schmidt bekommt 10 % Rabatt.',
    );
  });
});

describe('redact_pii beyond transcript, summary and request', () => {
  it('also replaces the chosen kinds in customer_name, note and string outcomes, at intake and on PATCH', async () => {
    const w = await ctx.build.world();
    await ctx.http
      .patch(`/v1/agents/${w.agentId}`)
      .set('X-API-Key', w.key)
      .send({
        redact_pii: ['phone', 'email', 'iban'],
        analysis_fields: [
          { name: 'rueckruf', type: 'string' },
          { name: 'kanal', type: 'enum', values: ['telefon', 'mail'] },
        ],
      })
      .expect(200);
    const res = await call(w, {
      phone_number: '+491701234567',
      customer_name: 'jörg@bücher.de',
      note: 'Konto de89 3704 0044 0532 0130 00',
      extracted_data: { rueckruf: 'unter 49 171 2345678', kanal: 'telefon' },
    });
    const expected = {
      customer_name: '[EMAIL]',
      note: 'Konto [IBAN]',
      extracted_data: { rueckruf: 'unter [PHONE]', kanal: 'telefon' },
      phone_number: '+491701234567',
    };
    expect(res).toMatchObject(expected);
    expect(await eventOf(res.id)).toMatchObject({ customer_name: '[EMAIL]', extracted_data: expected.extracted_data });
    const patched = await ctx.http
      .patch(`/v1/agents/${w.agentId}/calls/${res.id}`)
      .set('X-API-Key', w.key)
      .send({ note: 'IBAN DE 89 3704 0044 0532 0130 00', extracted_data: { rueckruf: 'anna@example.com' } })
      .expect(200);
    expect(patched.body).toMatchObject({ note: 'IBAN [IBAN]', extracted_data: { rueckruf: '[EMAIL]' } });
  });
});
