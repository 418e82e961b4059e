import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppendResultSchema, CampaignSchema } from '../../src/modules/outbound/outbound.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext({ config: { OUTBOUND_MAX_CONCURRENT_PER_AGENT: '1000' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const NOW = '2026-11-30T09:00:00.000Z';
const base = (agentId: string) => `/v1/agents/${agentId}/campaigns`;
const number = (i: number) => `+4930${String(20_000_000 + i)}`;

describe('campaigns', () => {
  it('creates 10,000 recipients in one request, variables merged over the defaults', async () => {
    ctx.clock.set(NOW);
    const agentId = await ctx.build.freshAgent(w.orgId);
    const recipients = Array.from({ length: 10_000 }, (_, i) => ({
      to_number: number(i),
      external_id: `r-${i}`,
      ...(i === 0 ? { variables: { name: 'Erika' } } : {}),
    }));
    const res = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({
        name: 'Termine',
        purpose: 'reminder',
        max_concurrent: 5,
        variables: { firm: 'Muster', name: '?' },
        recipients,
      })
      .expect(201);
    const campaign = expectSchema(res, CampaignSchema);
    expect(campaign.counters).toMatchObject({ scheduled: 10_000, total: 10_000 });
    expect(campaign.finished_at).toBeNull();
    const [first] = await ctx.db('outbound_jobs').where({ campaign_id: campaign.id, external_id: 'r-0' });
    expect(first.variables).toEqual({ firm: 'Muster', name: 'Erika' });
    expect(new Date(first.next_attempt_at).toISOString()).toBe(NOW);
  }, 60_000);

  it('refuses bad rows in one 400 naming each, storing nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({
        name: 'Werbung',
        purpose: 'marketing',
        recipients: [
          { to_number: number(1), consent: { basis: 'express_consent', obtained_at: NOW, source: 'form' } },
          { to_number: 'nope', consent: { basis: 'express_consent', obtained_at: NOW, source: 'form' } },
          { to_number: number(3) },
        ],
      })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'recipients[1].to_number',
      'recipients[2].consent',
    ]);
    expect(await ctx.db('outbound_campaigns').where({ agent_id: agentId })).toHaveLength(0);
  });

  it('appends JSON and CSV, skips known external_ids, pauses, resumes and cancels', async () => {
    ctx.clock.set(NOW);
    const agentId = await ctx.build.freshAgent(w.orgId);
    await ctx.http
      .post(`/v1/organization/${w.orgId}/do-not-call`)
      .set('X-API-Key', w.key)
      .send({ phone_number: number(99) });
    const created = await ctx.http
      .post(base(agentId))
      .set('X-API-Key', w.key)
      .send({ name: 'Rückrufe', purpose: 'callback', recipients: [{ to_number: number(50), external_id: 'a' }] })
      .expect(201);
    const id = created.body.id as string;
    const json = await ctx.http
      .post(`${base(agentId)}/${id}/recipients`)
      .set('X-API-Key', w.key)
      .send({ recipients: [{ to_number: number(51), external_id: 'a' }, { to_number: number(99) }] })
      .expect(200);
    expect(expectSchema(json, AppendResultSchema)).toMatchObject({ added: 1, skipped: 1 });
    const csv = await ctx.http
      .post(`${base(agentId)}/${id}/recipients`)
      .set('X-API-Key', w.key)
      .set('Content-Type', 'text/csv')
      .send('to_number,external_id,name\n030 20000052,c1,"Müller, Hans"\n030 20000053,c2,Erika\n')
      .expect(200);
    expect(csv.body.added).toBe(2);
    expect(csv.body.campaign.counters).toMatchObject({ scheduled: 3, blocked: 1, total: 4 });
    const [row] = await ctx.db('outbound_jobs').where({ campaign_id: id, external_id: 'c1' });
    expect(row).toMatchObject({ to_number: '+493020000052', variables: { name: 'Müller, Hans' } });
    const bad = await ctx.http
      .post(`${base(agentId)}/${id}/recipients`)
      .set('X-API-Key', w.key)
      .set('Content-Type', 'text/csv')
      .send('to_number\n030 20000054\nkaputt\n')
      .expect(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['recipients[1].to_number']);

    await ctx.http
      .post(`${base(agentId)}/${id}/pause`)
      .set('X-API-Key', w.key)
      .expect(200);
    const claimed = await ctx.http.post('/v1/outbound/claim').set('X-API-Key', w.key).send({ max: 50 }).expect(200);
    expect(claimed.body.data.filter((j: { campaign_id: string }) => j.campaign_id === id)).toEqual([]);
    await ctx.http
      .post(`${base(agentId)}/${id}/resume`)
      .set('X-API-Key', w.key)
      .expect(200);
    const cancelled = await ctx.http
      .post(`${base(agentId)}/${id}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', finished_at: NOW });
    expect(cancelled.body.counters).toMatchObject({ scheduled: 0, cancelled: 3, blocked: 1 });
    await ctx.http
      .post(`${base(agentId)}/${id}/cancel`)
      .set('X-API-Key', w.key)
      .expect(200);
    await ctx.http
      .post(`${base(agentId)}/${id}/resume`)
      .set('X-API-Key', w.key)
      .expect(400);
  });
});
