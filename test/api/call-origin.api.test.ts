import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallStatsSchema } from '../../src/modules/calls/call-stats.schemas.js';
import { CallSchema } from '../../src/modules/calls/call.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

/** Monday 30 November 2026, 10:00 in Berlin: inside the default calling window and the agents' hours. */
const MONDAY_10 = '2026-11-30T09:00:00.000Z';
let sequence = 0;

const calls = (agentId: string) => `/v1/agents/${agentId}/calls`;

function report(agentId: string, body: Record<string, unknown>, key = w.key) {
  sequence += 1;
  return ctx.http
    .post(calls(agentId))
    .set('X-API-Key', key)
    .send({ call_id: `origin-${sequence}`, duration: 30, ...body });
}

async function outboundJob(agentId: string, key = w.key): Promise<string> {
  const res = await ctx.http
    .post(`/v1/agents/${agentId}/outbound-calls`)
    .set('X-API-Key', key)
    .send({ to_number: ctx.build.phone(), purpose: 'callback' })
    .expect(201);
  return res.body.id as string;
}

/** An export's body as text. */
function download(path: string) {
  return ctx.http
    .get(path)
    .set('X-API-Key', w.key)
    .buffer(true)
    .parse((r, done) => {
      let text = '';
      r.on('data', (chunk: Buffer) => (text += chunk.toString()));
      r.on('end', () => done(null, text));
    })
    .expect(200);
}

/** The call.completed body recorded for the call (what receivers are sent). */
async function webhookCall(callId: string) {
  const [event] = await ctx
    .db('events')
    .where({ type: 'call.completed' })
    .whereRaw("payload->'call'->>'id' = ?", [callId]);
  return event.payload.call as Record<string, unknown>;
}

/** An agent with one running experiment of two variants (the current configuration twice). */
async function agentWithExperiment() {
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis' });
  await ctx.syncCaches();
  const base = `/v1/agents/${agent.id}/experiments`;
  const created = await ctx.http
    .post(base)
    .set('X-API-Key', w.key)
    .send({
      name: 'Begrüßung',
      variants: [
        { name: 'A', current: true, weight: 50 },
        { name: 'B', current: true, weight: 50 },
      ],
    })
    .expect(201);
  await ctx.http.post(`${base}/${created.body.id}/start`).set('X-API-Key', w.key).expect(200);
  const { phone_number: number } = await ctx.db('agents').where({ id: agent.id }).first('phone_number');
  return { id: agent.id, experimentId: created.body.id as string, number: number as string };
}

async function route(calledNumber: string, callId: string): Promise<string> {
  const res = await ctx.http
    .post('/v1/runtime/route')
    .set('X-API-Key', w.key)
    .send({ called_number: calledNumber, call_id: callId, at: MONDAY_10 })
    .expect(200);
  return res.body.experiment.variant as string;
}

describe('direction and outbound_call_id', () => {
  it('stores a call reported with its outbound job as outbound, in every representation', async () => {
    ctx.clock.set(MONDAY_10);
    const agentId = await ctx.build.freshAgent(w.orgId);
    const jobId = await outboundJob(agentId);
    const res = await report(agentId, { outbound_call_id: jobId.toUpperCase(), phone_number: '030 1234567' }).expect(
      201,
    );
    const call = expectSchema(res, CallSchema);
    expect(call).toMatchObject({
      direction: 'outbound',
      outbound_call_id: jobId,
      experiment_id: null,
      variant: null,
    });
    ctx.clock.advance(1000);
    const inbound = expectSchema(await report(agentId, {}).expect(201), CallSchema);
    expect(inbound).toMatchObject({ direction: 'inbound', outbound_call_id: null, experiment_id: null, variant: null });

    const one = await ctx.http
      .get(`${calls(agentId)}/${call.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(one.body).toMatchObject({ direction: 'outbound', outbound_call_id: jobId });
    const list = await ctx.http.get(calls(agentId)).set('X-API-Key', w.key).expect(200);
    expect(
      list.body.data.map((c: Record<string, unknown>) => [c.id, c.direction, c.outbound_call_id, c.variant]),
    ).toEqual([
      [inbound.id, 'inbound', null, null],
      [call.id, 'outbound', jobId, null],
    ]);
    const ndjson = await download(`${calls(agentId)}/export`);
    const lines = (ndjson.body as string)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((c) => [c.direction, c.outbound_call_id])).toEqual([
      ['inbound', null],
      ['outbound', jobId],
    ]);
    const csv = await download(`${calls(agentId)}/export?format=csv`);
    const [header, , outboundRow] = (csv.body as string).trim().split('\r\n');
    const columns = header!.split(',');
    const cells = outboundRow!.split(',');
    expect(cells[columns.indexOf('direction')]).toBe('outbound');
    expect(cells[columns.indexOf('outbound_call_id')]).toBe(jobId);
    expect(columns).toEqual(expect.arrayContaining(['experiment_id', 'variant']));

    expect(await webhookCall(call.id)).toMatchObject({
      direction: 'outbound',
      outbound_call_id: jobId,
      experiment_id: null,
      variant: null,
    });
    expect(await webhookCall(inbound.id)).toMatchObject({ direction: 'inbound', outbound_call_id: null });
  });

  it("refuses an unknown job, another agent's and another organization's with 400 naming outbound_call_id", async () => {
    ctx.clock.set(MONDAY_10);
    const agentId = await ctx.build.freshAgent(w.orgId);
    const sibling = await ctx.build.freshAgent(w.orgId);
    const other = await ctx.build.world();
    const foreign = [
      '00000000-0000-4000-8000-000000000000',
      await outboundJob(sibling),
      await outboundJob(other.agentId, other.key),
    ];
    for (const id of foreign) {
      const res = await report(agentId, { outbound_call_id: id }).expect(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'outbound_call_id' })]);
    }
    const malformed = await report(agentId, { outbound_call_id: 'job-1' }).expect(400);
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ field: 'outbound_call_id' })]);
    expect(await ctx.db('calls').where({ agent_id: agentId })).toHaveLength(0);
  });
});

describe('experiment_id and variant', () => {
  it('carries the variant the routing answer assigned to the call_id; other calls carry none', async () => {
    ctx.clock.set(MONDAY_10);
    const a = await agentWithExperiment();
    const variant = await route(a.number, 'routed-1');
    const res = await ctx.http
      .post(calls(a.id))
      .set('X-API-Key', w.key)
      .send({ call_id: 'routed-1', duration: 42 })
      .expect(201);
    expect(expectSchema(res, CallSchema)).toMatchObject({
      direction: 'inbound',
      experiment_id: a.experimentId,
      variant,
    });
    expect(await webhookCall(res.body.id)).toMatchObject({ experiment_id: a.experimentId, variant });

    // Not routed; and routed to this agent but reported for another agent (which did not run the variant).
    const plain = await report(a.id, {}).expect(201);
    expect(plain.body).toMatchObject({ experiment_id: null, variant: null });
    await route(a.number, 'routed-2');
    const elsewhere = await ctx.http
      .post(calls(w.agentId))
      .set('X-API-Key', w.key)
      .send({ call_id: 'routed-2', duration: 42 })
      .expect(201);
    expect(elsewhere.body).toMatchObject({ experiment_id: null, variant: null });
  });
});

describe('/calls/stats group_by=direction and group_by=variant', () => {
  it('splits the calls of an agent and of the organization by direction and by variant ("none" without one)', async () => {
    const world = await ctx.build.world();
    const http = (path: string) => ctx.http.get(path).set('X-API-Key', world.key);
    ctx.clock.set(MONDAY_10);
    const agent = await ctx.build.agent(world.orgId, { name: 'Praxis' });
    await ctx.syncCaches();
    const jobs = [await outboundJob(agent.id, world.key), await outboundJob(agent.id, world.key)];
    const variants: Record<string, number> = {};
    const experiment = await ctx.http
      .post(`/v1/agents/${agent.id}/experiments`)
      .set('X-API-Key', world.key)
      .send({
        name: 'Begrüßung',
        variants: [
          { name: 'A', current: true, weight: 50 },
          { name: 'B', current: true, weight: 50 },
        ],
      })
      .expect(201);
    await ctx.http
      .post(`/v1/agents/${agent.id}/experiments/${experiment.body.id}/start`)
      .set('X-API-Key', world.key)
      .expect(200);
    const { phone_number: number } = await ctx.db('agents').where({ id: agent.id }).first('phone_number');
    for (let i = 0; i < 6; i++) {
      const res = await ctx.http
        .post('/v1/runtime/route')
        .set('X-API-Key', world.key)
        .send({ called_number: number, call_id: `split-${i}`, at: MONDAY_10 })
        .expect(200);
      const name = res.body.experiment.variant as string;
      variants[name] = (variants[name] ?? 0) + 1;
      ctx.clock.set(new Date(Date.parse(MONDAY_10) + (i + 1) * 60_000));
      await ctx.http
        .post(calls(agent.id))
        .set('X-API-Key', world.key)
        .send({ call_id: `split-${i}`, duration: 60, ...(i < 2 ? { outbound_call_id: jobs[i] } : {}) })
        .expect(201);
    }
    // One inbound call of another agent of the organization, outside any experiment.
    await ctx.http
      .post(calls(world.agentId))
      .set('X-API-Key', world.key)
      .send({ call_id: 'split-other', duration: 60 })
      .expect(201);

    const range = 'from=2026-11-30&to=2026-11-30&tz=UTC';
    const agentStats = async (groupBy: string) => {
      const res = await http(`${calls(agent.id)}/stats?${range}&group_by=${groupBy}`).expect(200);
      return expectSchema(res, CallStatsSchema);
    };
    const byDirection = await agentStats('direction');
    expect(byDirection.group_by).toBe('direction');
    expect(byDirection.buckets).toHaveLength(1);
    expect(byDirection.buckets[0]!.groups).toEqual({ outbound: 2, inbound: 4 });
    const byVariant = await agentStats('variant');
    expect(byVariant.buckets[0]!.groups).toEqual(variants);
    expect(Object.values(variants).reduce((a, b) => a + b, 0)).toBe(6);

    const orgStats = async (groupBy: string) => {
      const res = await http(`/v1/organization/${world.orgId}/calls/stats?${range}&group_by=${groupBy}`).expect(200);
      return expectSchema(res, CallStatsSchema).buckets[0]!.groups;
    };
    expect(await orgStats('direction')).toEqual({ outbound: 2, inbound: 5 });
    expect(await orgStats('variant')).toEqual({ ...variants, none: 1 });

    const refused = await http(`${calls(agent.id)}/stats?${range}&group_by=direktion`).expect(400);
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({ field: 'group_by', message: expect.stringContaining('direction, variant') }),
    ]);
  });
});
