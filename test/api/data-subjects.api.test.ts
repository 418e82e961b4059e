import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectHash } from '../../src/modules/privacy/data-subject.rules.js';
import { DataSubjectErasureSchema, DataSubjectExportSchema } from '../../src/modules/privacy/data-subject.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

let ctx: TestContext;
let receiver: Receiver;
beforeAll(async () => {
  ctx = await createTestContext();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

const exportOf = (w: World, body: object, key = w.key) =>
  ctx.http.post(`/v1/organization/${w.orgId}/data-subjects/export`).set('X-API-Key', key).send(body);
const erase = (w: World, body: object, key = w.key) =>
  ctx.http.post(`/v1/organization/${w.orgId}/data-subjects/erase`).set('X-API-Key', key).send(body);

let seq = 0;
/** A finished call reported through intake; `phone` as the telephony layer writes it. */
async function call(w: World, phone: string, extra: Record<string, unknown> = {}, agentId = w.agentId) {
  const res = await ctx.http
    .post(`/v1/agents/${agentId}/calls`)
    .set('X-API-Key', w.key)
    .send({
      call_id: `call-${++seq}-${randomUUID()}`,
      phone_number: phone,
      customer_name: 'Anna Schmidt',
      customer_request: 'Termin verschieben',
      call_summary: 'Anna möchte den Termin verschieben',
      transcript: [{ role: 'user', text: 'Hallo, hier ist Anna' }],
      audio_file_url: 'https://recordings.example.com/a.mp3',
      duration: 95,
      general_success: true,
      final_score: 8,
      ...extra,
    })
    .expect(201);
  return res.body as { id: string };
}

async function contact(w: World, fields: Record<string, unknown>, agentId = w.agentId) {
  const res = await ctx.http
    .post(`/v1/agents/${agentId}/contacts`)
    .set('X-API-Key', w.key)
    .send({ customer_name: 'Anna Schmidt', ...fields })
    .expect(201);
  return res.body as { id: string };
}

describe('POST /v1/organization/{orgId}/data-subjects/export', () => {
  it('finds one person under every written form of the number, with contacts and full calls', async () => {
    const w = await ctx.build.world();
    const c = await contact(w, { phone_number: '+49 30 1234567', email: 'Anna@Example.com' });
    const a = await call(w, '030 1234567');
    const b = await call(w, '+49 30 1234567');
    const other = await call(w, '+49 30 7654321', { customer_name: 'Bernd' });
    for (const phone of ['030 1234567', '+49 30 1234567', '+49301234567', '0049 (0)30 123-4567']) {
      const res = await exportOf(w, { phone_number: phone }).expect(200);
      expectSchema(res, DataSubjectExportSchema);
      expect(res.body.identifier).toEqual({ kind: 'phone_number', value: '+49301234567' });
      expect(res.body.contacts.map((x: { id: string }) => x.id)).toEqual([c.id]);
      expect(res.body.calls.map((x: { id: string }) => x.id).sort()).toEqual([a.id, b.id].sort());
      expect(res.body.calls.map((x: { id: string }) => x.id)).not.toContain(other.id);
      expect(res.body.calls[0].transcript).toBe(JSON.stringify([{ role: 'user', text: 'Hallo, hier ist Anna' }]));
      expect(res.body.mentions.webhook_deliveries).toBe(2);
    }
    const byEmail = await exportOf(w, { email: 'ANNA@example.com' }).expect(200);
    expect(byEmail.body.calls).toHaveLength(2);
    const byContact = await exportOf(w, { contact_id: c.id }).expect(200);
    expect(byContact.body.contacts[0].email).toBe('Anna@Example.com');
    expect(byContact.body.calls).toHaveLength(2);
    const audit = await ctx.db('audit_log').where({ organization_id: w.orgId, action: 'data_subject.exported' });
    expect(audit).toHaveLength(6);
    expect(audit[0].details).toEqual({ contacts: 1, calls: 2 });
    expect(JSON.stringify(audit)).not.toMatch(/1234567|anna/i);
  });

  it('answers 200 with empty lists for a person nobody stored', async () => {
    const w = await ctx.build.world();
    const res = await exportOf(w, { contact_id: randomUUID() }).expect(200);
    expect(res.body).toMatchObject({ contacts: [], calls: [], mentions: { webhook_deliveries: 0 } });
  });

  it('streams a person with many long calls: every call once, oldest first, transcripts whole', async () => {
    const w = await ctx.build.world();
    // Every other call about 270 KB of text (entries of at most 100 000 characters each).
    const long = (i: number) =>
      Array.from({ length: i % 2 === 0 ? 3 : 1 }, (_, n) => ({
        role: 'user',
        text: `${i}.${n} ${'Anna '.repeat(18_000)}`,
      }));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ctx.clock.set(new Date(Date.parse('2026-03-01T10:00:00Z') + i * 60_000).toISOString());
      ids.push((await call(w, '+49 30 5550000', { transcript: long(i) })).id);
    }
    const res = await exportOf(w, { phone_number: '030 5550000' }).expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expectSchema(res, DataSubjectExportSchema);
    expect(res.body.calls.map((c: { id: string }) => c.id)).toEqual(ids);
    res.body.calls.forEach((c: { transcript: string }, i: number) =>
      expect(c.transcript).toBe(JSON.stringify(long(i))),
    );
    const audited = () => ctx.db('audit_log').where({ organization_id: w.orgId, action: 'data_subject.exported' });
    expect((await audited()).map((a) => a.details)).toEqual([{ contacts: 0, calls: 8 }]);

    // A client that goes away after the first bytes has seen the person's data: it is in the audit log too.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        new URL(`${ctx.baseUrl}/v1/organization/${w.orgId}/data-subjects/export`),
        { method: 'POST', headers: { 'X-API-Key': w.key, 'Content-Type': 'application/json' } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', (error) => (req.destroyed ? resolve() : reject(error)));
      req.end(JSON.stringify({ phone_number: '+49305550000' }));
    });
    expect(await audited()).toHaveLength(2);
  });

  it.each([
    [{}, ['phone_number', 'email', 'contact_id']],
    [{ phone_number: '+49301234567', email: 'a@example.com' }, ['phone_number', 'email']],
    [{ phone_number: 'not a number' }, ['phone_number']],
    [{ email: 'nope' }, ['email']],
    [{ contact_id: 'x' }, ['contact_id']],
  ])('refuses %j with 400 naming %j', async (body, fields) => {
    const w = await ctx.build.world();
    const res = await exportOf(w, body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([...fields].sort());
  });

  it('is 403 without privacy:write, 404 for an organization out of reach, 403 for a dashboard member', async () => {
    const w = await ctx.build.world();
    const stranger = await ctx.build.world();
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read', 'contacts:read'] });
    const res = await exportOf(w, { phone_number: '+49301234567' }, key.key).expect(403);
    expect(res.body.error.message).toBe('API key lacks required permission: privacy:write');
    await ctx.http
      .post(`/v1/organization/${stranger.orgId}/data-subjects/export`)
      .set('X-API-Key', w.key)
      .send({ phone_number: '+49301234567' })
      .expect(404);
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.syncCaches();
    await ctx.http
      .post(`/v1/organization/${w.orgId}/data-subjects/export`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .send({ phone_number: '+49301234567' })
      .expect(403);
    const admin = await ctx.build.user(w.orgId, 'admin');
    await ctx.syncCaches();
    await ctx.http
      .post(`/v1/organization/${w.orgId}/data-subjects/export`)
      .set('Authorization', `Bearer ${ctx.build.token(admin.id)}`)
      .send({ phone_number: '+49301234567' })
      .expect(200);
  });

  it('can be given to an API key created with privacy:write', async () => {
    const w = await ctx.build.world();
    const created = await ctx.http
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ name: 'DSGVO', organization_id: w.orgId, permissions: ['privacy:write'] })
      .expect(201);
    expect(created.body.permissions).toEqual(['privacy:write']);
    await exportOf(w, { phone_number: '+49301234567' }, created.body.key).expect(200);
  });

  it('keeps no copy of an export for Idempotency-Key replays', async () => {
    const w = await ctx.build.world();
    await call(w, '+49301234568');
    await exportOf(w, { phone_number: '+49301234568' }).set('Idempotency-Key', 'export-1').expect(200);
    expect(await ctx.db('idempotency_keys').where({ idempotency_key: 'export-1' })).toEqual([]);
  });
});

describe('POST /v1/organization/{orgId}/data-subjects/erase', () => {
  it("erases one person's data, keeps the calls' statistics and leaves other people alone", async () => {
    const w = await ctx.build.world();
    const url = receiver.url('ok');
    await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ webhook_url: url, webhook_events: ['data_subject.erased'] })
      .expect(200);
    const c = await contact(w, { phone_number: '+49 170 1234567', email: 'anna@example.com' });
    const keep = await contact(w, { customer_name: 'Bernd Meier', phone_number: '+49 30 7654321' });
    const a = await call(w, '0170 1234567');
    const b = await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .set('Idempotency-Key', 'intake-anna')
      .send({ call_id: `idem-${randomUUID()}`, phone_number: '+491701234567', duration: 30, customer_name: 'Anna' })
      .expect(201);
    const other = await call(w, '+49 30 7654321', {
      customer_name: 'Bernd Meier',
      customer_request: 'Rückruf',
      call_summary: 'Bernd bittet um Rückruf',
      transcript: [{ role: 'user', text: 'Hier ist Bernd' }],
    });
    await ctx.internals.webhookWorker.drain();

    const dry = await erase(w, { phone_number: '0170/1234567', dry_run: true }).expect(200);
    expectSchema(dry, DataSubjectErasureSchema);
    expect(dry.headers['dry-run']).toBe('true');
    expect(dry.body).toEqual({
      erasure_id: null,
      dry_run: true,
      erased: {
        contacts: 1,
        calls: 2,
        webhook_deliveries: 2,
        idempotency_records: 1,
        test_cases: 0,
        outbound_calls: 0,
      },
      kb_documents_to_review: [],
      kept: [],
    });
    expect(await ctx.db('contacts').where({ id: c.id }).first()).toBeDefined();
    expect(await ctx.db('data_subject_erasures').where({ organization_id: w.orgId })).toEqual([]);

    const res = await erase(w, { phone_number: '+49 170 1234567' }).expect(200);
    expectSchema(res, DataSubjectErasureSchema);
    expect(res.body).toMatchObject({
      dry_run: false,
      erased: {
        contacts: 1,
        calls: 2,
        webhook_deliveries: 2,
        idempotency_records: 1,
        test_cases: 0,
        outbound_calls: 0,
      },
    });
    const erasureId = res.body.erasure_id as string;

    expect(await ctx.db('contacts').where({ id: c.id }).first()).toBeUndefined();
    expect(await ctx.db('contacts').where({ id: keep.id }).first()).toBeDefined();
    for (const id of [a.id, b.body.id]) {
      const row = await ctx.db('calls').where({ id }).first();
      expect(row).toMatchObject({
        phone_number: null,
        customer_name: null,
        customer_request: null,
        call_summary: null,
        transcript: null,
        audio_file_url: null,
        is_purged: true,
        agent_id: w.agentId,
      });
      expect(row.duration).toBeGreaterThan(0);
    }
    expect(await ctx.db('calls').where({ id: a.id }).first()).toMatchObject({ general_success: true, final_score: 8 });
    expect(await ctx.db('calls').where({ id: other.id }).first()).toMatchObject({
      phone_number: '+49307654321',
      customer_name: 'Bernd Meier',
    });
    const bodies = await ctx.db('events').where({ organization_id: w.orgId, type: 'call.completed' });
    const text = JSON.stringify(bodies.map((e: { payload: unknown }) => e.payload));
    expect(text).not.toContain('1701234567');
    expect(text).not.toContain('Anna');
    expect(text).toContain('Bernd Meier');
    expect(await ctx.db('idempotency_keys').where({ idempotency_key: 'intake-anna' })).toEqual([]);

    const audit = await ctx.db('audit_log').where({ organization_id: w.orgId, action: 'data_subject.erased' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ resource_id: erasureId, resource_type: 'data_subject_erasure' });
    expect(audit[0].details).toEqual({
      erasure_id: erasureId,
      contacts: 1,
      calls: 2,
      webhook_deliveries: 2,
      idempotency_records: 1,
      test_cases: 0,
      outbound_calls: 0,
    });
    expect(JSON.stringify(audit[0])).not.toContain('1701234567');
    const listed = await ctx.http
      .get(`/v1/organization/${w.orgId}/audit-log?action=data_subject.erased`)
      .set('X-API-Key', w.key);
    expect(listed.status).toBe(200);
    expect(listed.body.data[0].details.calls).toBe(2);

    const delivered = receiver.nextRequestTo(url);
    await ctx.internals.webhookWorker.drain();
    const sent = await delivered;
    expect(sent.headers['webhook-signature']).toMatch(/^v1,/);
    expect(JSON.parse(sent.body)).toMatchObject({
      event: 'data_subject.erased',
      erasure_id: erasureId,
      organization_id: w.orgId,
      erased: {
        contacts: 1,
        calls: 2,
        webhook_deliveries: 2,
        idempotency_records: 1,
        test_cases: 0,
        outbound_calls: 0,
      },
    });
    expect(sent.body).not.toContain('1701234567');
    expect(sent.body).not.toContain('anna');

    const again = await erase(w, { phone_number: '+491701234567' }).expect(200);
    expect(again.body.erased).toEqual({
      contacts: 0,
      calls: 0,
      webhook_deliveries: 0,
      idempotency_records: 0,
      test_cases: 0,
      outbound_calls: 0,
    });
    expect(again.body.erasure_id).not.toBe(erasureId);
    const exported = await exportOf(w, { phone_number: '+491701234567' }).expect(200);
    expect(exported.body).toMatchObject({ contacts: [], calls: [] });
  });

  it("drops the person's free-text outcomes from calls and stored webhook bodies, keeping the typed ones", async () => {
    const w = await ctx.build.world();
    await ctx.http
      .patch(`/v1/agents/${w.agentId}`)
      .set('X-API-Key', w.key)
      .send({
        analysis_fields: [
          { name: 'anliegen', type: 'string' },
          { name: 'kategorie', type: 'enum', values: ['heizung', 'wasser'] },
          { name: 'notfall', type: 'boolean' },
        ],
      })
      .expect(200);
    const outcome = { anliegen: 'Anna Schmidt, Heizung defekt', kategorie: 'heizung', notfall: true };
    const mine = await call(w, '+49 171 2223334', { extracted_data: outcome });
    const theirs = await call(w, '+49 171 9998887', { extracted_data: outcome });
    await ctx.internals.webhookWorker.drain();

    await erase(w, { phone_number: '0171 2223334' }).expect(200);
    const kept = { kategorie: 'heizung', notfall: true };
    expect((await ctx.db('calls').where({ id: mine.id }).first()).extracted_data).toEqual(kept);
    expect((await ctx.db('calls').where({ id: theirs.id }).first()).extracted_data).toEqual(outcome);
    const bodies = await ctx.db('events').where({ organization_id: w.orgId, type: 'call.completed' });
    const byCall = (id: string) => bodies.find((e) => e.payload.call.id === id)?.payload.call.extracted_data;
    expect(byCall(mine.id)).toEqual(kept);
    expect(byCall(theirs.id)).toEqual(outcome);
  });

  it('announces data_subject.erased once to each agent URL of the organization that chose it, and to no other', async () => {
    const w = await ctx.build.world();
    const chose = receiver.url('ok');
    const didNot = receiver.url('ok');
    for (const [url, events] of [
      [chose, ['call.completed', 'data_subject.erased']],
      [chose, ['data_subject.erased']],
      [didNot, ['call.completed']],
    ] as const)
      await ctx.build.agent(w.orgId, { post_call_webhook_url: url, post_call_webhook_events: events });
    await call(w, '+49 30 3334445');
    await ctx.internals.webhookWorker.drain();
    const delivered = receiver.nextRequestTo(chose);
    const res = await erase(w, { phone_number: '+49303334445' }).expect(200);
    await ctx.internals.webhookWorker.drain();
    expect(JSON.parse((await delivered).body)).toMatchObject({
      event: 'data_subject.erased',
      erasure_id: res.body.erasure_id,
      erased: { calls: 1 },
    });
    expect(receiver.requestsTo(chose)).toHaveLength(1);
    expect(receiver.requestsTo(didNot)).toEqual([]);
    const deliveries = await ctx
      .db('webhook_deliveries')
      .where({ organization_id: w.orgId, event_type: 'data_subject.erased' });
    expect(deliveries.map((d: { target_kind: string; target_url: string }) => [d.target_kind, d.target_url])).toEqual([
      ['agent', chose],
    ]);
  });

  it('resumes an interrupted erasure under the same erasure_id and finishes it', async () => {
    const w = await ctx.build.world();
    await contact(w, { phone_number: '+49 30 2223334' });
    const a = await call(w, '+49302223334');
    await call(w, '030 2223334');
    // An erasure that stopped after its first batch: one call erased, the rest still there.
    const [started] = await ctx
      .db('data_subject_erasures')
      .insert({
        organization_id: w.orgId,
        subject_hash: subjectHash(w.orgId, { kind: 'phone_number', value: '+49302223334' }),
        calls: 1,
        created_at: new Date(),
        updated_at: new Date(),
      })
      .returning('id');
    await ctx.db('calls').where({ id: a.id }).update({ phone_number: null, customer_name: null, is_purged: true });

    const dry = await erase(w, { phone_number: '+49302223334', dry_run: true }).expect(200);
    expect(dry.body.erasure_id).toBe(started.id);
    const res = await erase(w, { phone_number: '030 222 33 34' }).expect(200);
    expect(res.body).toMatchObject({ erasure_id: started.id, erased: { contacts: 1, calls: 2 } });
    const row = await ctx.db('data_subject_erasures').where({ id: started.id }).first();
    expect(row.completed_at).not.toBeNull();
    expect(row.subject_hash).toBeNull();
  });

  it('erases the person found by contact_id or email, and only in the organization asked for', async () => {
    const w = await ctx.build.world();
    const elsewhere = await ctx.build.world();
    // The main number follows the mobile one; the landline is the person's too.
    const c = await contact(w, {
      mobile_number: '+49 171 5556667',
      landline_number: '+49 30 5556667',
      email: 'x@example.com',
    });
    await call(w, '+49 171 5556667');
    await call(w, '+49 30 5556667');
    const foreign = await call(elsewhere, '+49 30 5556667');
    const res = await erase(w, { contact_id: c.id }).expect(200);
    expect(res.body.erased).toMatchObject({ contacts: 1, calls: 2 });
    expect(await ctx.db('calls').where({ id: foreign.id }).first()).toMatchObject({ phone_number: '+49305556667' });
    const byEmail = await erase(w, { email: 'X@example.com' }).expect(200);
    expect(byEmail.body.erased).toMatchObject({ contacts: 0, calls: 0 });
  });

  it('answers two erasures of the same person at once without an error, erasing every call once', async () => {
    const w = await ctx.build.world();
    await contact(w, { phone_number: '+49 30 4445556' });
    for (let i = 0; i < 6; i++) await call(w, i % 2 ? '030 4445556' : '+49304445556');
    const [one, two] = await Promise.all([
      erase(w, { phone_number: '+49304445556' }),
      erase(w, { phone_number: '+49304445556' }),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const ids = new Set([one.body.erasure_id, two.body.erasure_id]);
    const rows = await ctx.db('data_subject_erasures').whereIn('id', [...ids]);
    expect(rows.reduce((sum: number, r: { calls: number }) => sum + r.calls, 0)).toBe(6);
    expect(rows.reduce((sum: number, r: { contacts: number }) => sum + r.contacts, 0)).toBe(1);
    expect(await ctx.db('calls').where({ agent_id: w.agentId }).whereNotNull('phone_number')).toEqual([]);
    const entries = await ctx.db('audit_log').where({ organization_id: w.orgId }).whereLike('route', '%/erase');
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['data_subject.erased', 'data_subject.erased']);
  });

  it('is 403 without privacy:write and changes nothing', async () => {
    const w = await ctx.build.world();
    const c = await contact(w, { phone_number: '+49 30 9998887' });
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['contacts:write', 'calls:write'] });
    await erase(w, { contact_id: c.id }, key.key).expect(403);
    expect(await ctx.db('contacts').where({ id: c.id }).first()).toBeDefined();
  });
});

describe('redact_pii at call intake', () => {
  it('defaults to [] and refuses unknown or repeated kinds with 400, changing nothing', async () => {
    const w = await ctx.build.world();
    const agent = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    expect(agent.body.redact_pii).toEqual([]);
    for (const redact_pii of [['phone', 'address'], ['phone', 'phone'], 'phone']) {
      const res = await ctx.http
        .patch(`/v1/agents/${w.agentId}`)
        .set('X-API-Key', w.key)
        .send({ redact_pii })
        .expect(400);
      expect(res.body.error.details[0].field).toMatch(/^redact_pii/);
    }
    expect((await ctx.db('agents').where({ id: w.agentId }).first()).redact_pii).toEqual([]);
  });

  it('replaces the chosen kinds in transcript, summary and request before storing and sending', async () => {
    const w = await ctx.build.world();
    const url = receiver.url('ok');
    const patched = await ctx.http
      .patch(`/v1/agents/${w.agentId}`)
      .set('X-API-Key', w.key)
      .send({ redact_pii: ['phone', 'email', 'iban', 'birthdate'], post_call_webhook_url: url })
      .expect(200);
    expect(patched.body.redact_pii).toEqual(['phone', 'email', 'iban', 'birthdate']);
    const res = await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({
        call_id: `pii-${randomUUID()}`,
        phone_number: '+491701234567',
        customer_name: 'Anna Schmidt',
        duration: 60,
        customer_request: 'Rückruf unter 0170 1234567, Bestellung 4711-0815 um 14:30 Uhr',
        call_summary:
          'Anna (geb. 24.12.1980) zahlt von DE89 3704 0044 0532 0130 00, 49,90 €; Karte 4111 1111 1111 1111',
        transcript: [
          { role: 'user', text: 'Meine Mail ist anna@example.de und meine Nummer +49 (0)30 123 45 67.' },
          { role: 'agent', text: 'Danke, Termin am 03.12.2026.' },
        ],
      })
      .expect(201);
    const expected = {
      customer_request: 'Rückruf unter [PHONE], Bestellung 4711-0815 um 14:30 Uhr',
      // card is not chosen: the card number stays.
      call_summary: 'Anna (geb. [BIRTHDATE]) zahlt von [IBAN], 49,90 €; Karte 4111 1111 1111 1111',
      transcript: JSON.stringify([
        { role: 'user', text: 'Meine Mail ist [EMAIL] und meine Nummer [PHONE].' },
        { role: 'agent', text: 'Danke, Termin am 03.12.2026.' },
      ]),
      // The caller's number and name are fields of their own, not free text: erasure covers them.
      phone_number: '+491701234567',
      customer_name: 'Anna Schmidt',
    };
    expect(res.body).toMatchObject(expected);
    const stored = await ctx.http.get(`/v1/agents/${w.agentId}/calls/${res.body.id}`).set('X-API-Key', w.key);
    expect(stored.body).toMatchObject(expected);
    const delivered = receiver.nextRequestTo(url);
    await ctx.internals.webhookWorker.drain();
    const sent = JSON.parse((await delivered).body);
    expect(sent.call).toMatchObject(expected);
    expect(JSON.stringify(sent)).not.toContain('anna@example.de');
  });
});
