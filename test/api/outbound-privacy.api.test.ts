import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSubjectErasureSchema, DataSubjectExportSchema } from '../../src/modules/privacy/data-subject.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

// Consent records and the do-not-call list meet the data-subject rights: the export shows them, the
// erasure keeps them and says so, and consent records go five years after the last call.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Monday 30 November 2026, 10:00 in Berlin: inside the default calling window. */
const MONDAY_10 = '2026-11-30T09:00:00.000Z';
/** A year later, Tuesday 30 November 2027, 10:00 in Berlin. */
const YEAR_LATER = '2027-11-30T09:00:00.000Z';
const CONSENT = { basis: 'express_consent', obtained_at: '2026-11-01T12:00:00Z', source: 'Web form #12' };

function job(w: World, body: Record<string, unknown>) {
  return ctx.http.post(`/v1/agents/${w.agentId}/outbound-calls`).set('X-API-Key', w.key).send(body).expect(201);
}

const marketing = (w: World, to: string) => job(w, { to_number: to, purpose: 'marketing', consent: CONSENT });

function exportOf(w: World, body: object) {
  return ctx.http.post(`/v1/organization/${w.orgId}/data-subjects/export`).set('X-API-Key', w.key).send(body);
}

function erase(w: World, body: object) {
  return ctx.http.post(`/v1/organization/${w.orgId}/data-subjects/erase`).set('X-API-Key', w.key).send(body);
}

const consentOf = (jobId: string) => ctx.db('outbound_consents').where({ job_id: jobId }).first();
const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

describe('consent records in the data-subject export', () => {
  it("lists the consent records and the do-not-call entry of the person's numbers, and no one else's", async () => {
    ctx.clock.set(MONDAY_10);
    const w = await ctx.build.world();
    const anna = '+49301234567';
    const first = await marketing(w, '030 1234567');
    ctx.clock.advance(60_000);
    const second = await marketing(w, anna);
    await marketing(w, ctx.build.phone());
    await ctx.http
      .post(`/v1/organization/${w.orgId}/do-not-call`)
      .set('X-API-Key', w.key)
      .send({ phone_number: anna, reason: 'Will keine Werbung' })
      .expect(201);
    await ctx.http
      .post(`/v1/agents/${w.agentId}/contacts`)
      .set('X-API-Key', w.key)
      .send({ customer_name: 'Anna Schmidt', email: 'anna@example.com', phone_number: anna })
      .expect(201);

    for (const identifier of [{ phone_number: '0049 30 1234567' }, { email: 'anna@example.com' }]) {
      const res = await exportOf(w, identifier).expect(200);
      const body = expectSchema(res, DataSubjectExportSchema);
      expect(body.outbound_consents).toEqual([
        {
          id: (await consentOf(first.body.id)).id,
          agent_id: w.agentId,
          outbound_call_id: first.body.id,
          phone_number: anna,
          basis: 'express_consent',
          obtained_at: '2026-11-01T12:00:00.000Z',
          source: 'Web form #12',
          last_call_at: null,
          keep_until: '2031-11-30T09:00:00.000Z',
          created_at: MONDAY_10,
        },
        expect.objectContaining({ outbound_call_id: second.body.id, keep_until: '2031-11-30T09:01:00.000Z' }),
      ]);
      expect(body.do_not_call).toEqual([
        { phone_number: anna, reason: 'Will keine Werbung', source: 'api', created_at: '2026-11-30T09:01:00.000Z' },
      ]);
    }
    const nobody = expectSchema(
      await exportOf(w, { phone_number: '+49 30 7777777' }).expect(200),
      DataSubjectExportSchema,
    );
    expect([nobody.outbound_consents, nobody.do_not_call]).toEqual([[], []]);
  });
});

describe('consent expiry', () => {
  it('a call to the number keeps every consent record of that number five years from the call', async () => {
    ctx.clock.set(MONDAY_10);
    const w = await ctx.build.world();
    const to = ctx.build.phone();
    const earlier = await marketing(w, to);
    await ctx.http
      .post(`/v1/agents/${w.agentId}/outbound-calls/${earlier.body.id}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    ctx.clock.set(YEAR_LATER);
    // A call-back to the same number, documented without consent of its own.
    const callback = await job(w, { to_number: to, purpose: 'callback' });
    const claimed = await ctx.http
      .post('/v1/outbound/claim')
      .set('X-API-Key', w.key)
      .send({ max: 5, lease_seconds: 60 })
      .expect(200);
    expect(claimed.body.data.map((j: { job_id: string }) => j.job_id)).toEqual([callback.body.id]);
    const record = await consentOf(earlier.body.id);
    expect([iso(record.last_call_at), iso(record.keep_until)]).toEqual([YEAR_LATER, '2032-11-30T09:00:00.000Z']);
  });

  it('the daily job deletes only the records whose keep_until has passed', async () => {
    ctx.clock.set(MONDAY_10);
    const w = await ctx.build.world();
    const expired = await marketing(w, ctx.build.phone());
    const due = await marketing(w, ctx.build.phone());
    ctx.clock.set(YEAR_LATER);
    const younger = await marketing(w, ctx.build.phone());
    // Five years and a day after the first two: the first has passed, the third is four years old.
    ctx.clock.set('2031-12-01T09:00:00.000Z');
    await ctx.db('outbound_consents').where({ job_id: due.body.id }).update({ keep_until: '2031-12-01T09:00:00.000Z' });
    const deleted = await ctx.internals.consentExpiry.run();
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await consentOf(expired.body.id)).toBeUndefined();
    // keep_until exactly now has not passed yet; the younger one has years to go.
    expect(await consentOf(due.body.id)).toBeDefined();
    expect(await consentOf(younger.body.id)).toBeDefined();
    ctx.clock.advance(1);
    await ctx.internals.consentExpiry.run();
    expect(await consentOf(due.body.id)).toBeUndefined();
    expect(await consentOf(younger.body.id)).toBeDefined();
  });
});

describe('erasure and the do-not-call list', () => {
  it('keeps the do-not-call entry and the consent records of the number, and says so (dry run too)', async () => {
    ctx.clock.set(MONDAY_10);
    const w = await ctx.build.world();
    const to = '+491701234567';
    const consented = await marketing(w, to);
    const call = await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({ call_id: 'objection-1', phone_number: '0170 1234567', duration: 40, opt_out: true })
      .expect(201);

    const dry = await erase(w, { phone_number: '0170/1234567', dry_run: true }).expect(200);
    const dryBody = expectSchema(dry, DataSubjectErasureSchema);
    expect(dryBody.kept.map((k) => [k.type, k.count])).toEqual([
      ['do_not_call', 1],
      ['outbound_consent', 1],
    ]);

    const res = await erase(w, { phone_number: to }).expect(200);
    const body = expectSchema(res, DataSubjectErasureSchema);
    expect(body.erased.calls).toBe(1);
    expect(body.kept).toEqual([
      { type: 'do_not_call', count: 1, reason: expect.stringContaining('objected') },
      { type: 'outbound_consent', count: 1, reason: expect.stringContaining('keep_until') },
    ]);
    expect(await ctx.db('do_not_call').where({ organization_id: w.orgId, phone_number: to })).toEqual([
      expect.objectContaining({ source: 'call_opt_out' }),
    ]);
    expect(await consentOf(consented.body.id)).toBeDefined();
    expect(await ctx.db('calls').where({ id: call.body.id }).first()).toMatchObject({ phone_number: null });
    // The number stays refused for new jobs after the erasure.
    const refused = await ctx.http
      .post(`/v1/agents/${w.agentId}/outbound-calls`)
      .set('X-API-Key', w.key)
      .send({ to_number: to, purpose: 'callback' })
      .expect(409);
    expect(refused.body.error.code).toBe('DO_NOT_CALL');

    const stranger = expectSchema(
      await erase(w, { phone_number: '+49 30 7777777' }).expect(200),
      DataSubjectErasureSchema,
    );
    expect(stranger.kept).toEqual([]);
  });
});

describe('erasure and outbound call jobs', () => {
  it("deletes the jobs to the person's numbers and contacts, which are never dialled then; others stay", async () => {
    ctx.clock.set(MONDAY_10);
    const w = await ctx.build.world();
    const anna = '+491701112233';
    const contact = await ctx.http
      .post(`/v1/agents/${w.agentId}/contacts`)
      .set('X-API-Key', w.key)
      .send({ customer_name: 'Anna Schmidt', phone_number: anna })
      .expect(201);
    const scheduled = await marketing(w, '0170 1112233');
    const finished = await job(w, { to_number: anna, purpose: 'callback' });
    await ctx.http
      .post(`/v1/agents/${w.agentId}/outbound-calls/${finished.body.id}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    // A job for her contact, to her office number.
    const viaContact = await job(w, { to_number: '+4930998877', contact_id: contact.body.id, purpose: 'reminder' });
    const other = await job(w, { to_number: ctx.build.phone(), purpose: 'callback' });

    const dry = expectSchema(
      await erase(w, { phone_number: anna, dry_run: true }).expect(200),
      DataSubjectErasureSchema,
    );
    expect(dry.erased.outbound_calls).toBe(3);
    expect(await ctx.db('outbound_jobs').where({ organization_id: w.orgId }).count({ n: '*' }).first()).toEqual({
      n: 4,
    });

    const done = expectSchema(await erase(w, { phone_number: anna }).expect(200), DataSubjectErasureSchema);
    expect(done.erased.outbound_calls).toBe(3);
    const left = await ctx.db('outbound_jobs').where({ organization_id: w.orgId }).pluck('id');
    expect(left).toEqual([other.body.id]);
    for (const gone of [scheduled, finished, viaContact]) {
      await ctx.http.get(`/v1/agents/${w.agentId}/outbound-calls/${gone.body.id}`).set('X-API-Key', w.key).expect(404);
    }
    // The consent record stays as proof; the dialer is handed only the other job.
    expect(await consentOf(scheduled.body.id)).toBeDefined();
    const claimed = await ctx.http
      .post('/v1/outbound/claim')
      .set('X-API-Key', w.key)
      .send({ max: 10, lease_seconds: 60 })
      .expect(200);
    expect(claimed.body.data.map((j: { job_id: string }) => j.job_id)).toEqual([other.body.id]);
  });
});
