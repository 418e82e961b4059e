import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExperimentResultsSchema } from '../../src/modules/experiments/experiment.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  ctx.clock.set('2026-11-23T08:00:00Z');
});
afterAll(() => ctx.close());

const asKey = <T extends { set(name: string, value: string): T }>(req: T) => req.set('X-API-Key', w.key);
const base = (agentId: string) => `/v1/agents/${agentId}/experiments`;

const FIELDS = [
  { name: 'result', type: 'enum', values: ['booked', 'callback', 'lost'] },
  { name: 'satisfied', type: 'boolean' },
  { name: 'note', type: 'string' },
];

/** An agent with outcome fields and a running experiment of three variants; its phone number. */
async function runningExperiment() {
  const agent = await ctx.build.agent(w.orgId, { name: 'Ergebnisse' });
  await asKey(ctx.http.patch(`/v1/agents/${agent.id}`))
    .send({ analysis_fields: FIELDS, short_calls_auto_edit: false })
    .expect(200);
  const created = await asKey(ctx.http.post(base(agent.id)))
    .send({
      name: 'Drei Varianten',
      variants: [
        { name: 'A', current: true, weight: 34 },
        { name: 'B', current: true, weight: 33 },
        { name: 'C', current: true, weight: 33 },
      ],
    })
    .expect(201);
  await asKey(ctx.http.post(`${base(agent.id)}/${created.body.id}/start`)).expect(200);
  const number = (await ctx.db('agents').where({ id: agent.id }).first('phone_number')).phone_number as string;
  return { agentId: agent.id as string, experimentId: created.body.id as string, number };
}

/** Routes new call ids until `want` of them landed on each named variant; their call ids per variant. */
async function routedCalls(number: string, want: Record<string, number>): Promise<Record<string, string[]>> {
  const ids: Record<string, string[]> = Object.fromEntries(Object.keys(want).map((name) => [name, []]));
  for (let i = 0; Object.entries(want).some(([name, n]) => ids[name]!.length < n); i++) {
    expect(i).toBeLessThan(200);
    const callId = `res-${number}-${i}`;
    const res = await asKey(ctx.http.post('/v1/runtime/route'))
      .send({ called_number: number, call_id: callId })
      .expect(200);
    const variant = res.body.experiment.variant as string;
    if (ids[variant] && ids[variant]!.length < want[variant]!) ids[variant]!.push(callId);
  }
  return ids;
}

type Reported = { done: boolean; duration: number; extracted_data: Record<string, unknown> };

async function report(agentId: string, callId: string, call: Reported): Promise<void> {
  await asKey(ctx.http.post(`/v1/agents/${agentId}/calls`))
    .send({ call_id: callId, phone_number: ctx.build.phone(), ...call })
    .expect(201);
}

describe('GET /v1/agents/{agentId}/experiments/{experimentId}/results', () => {
  it('answers per variant the figures of a hand-computed example', async () => {
    const { agentId, experimentId, number } = await runningExperiment();
    const ids = await routedCalls(number, { A: 5, B: 5 });
    // A: 1 of 4 done, durations 60 + 120 + 30 + 90 = 300 (avg 75); the fifth call goes to the trash.
    const a: Reported[] = [
      { done: true, duration: 60, extracted_data: { result: 'booked', satisfied: true, note: 'x' } },
      { done: false, duration: 120, extracted_data: { result: 'booked', satisfied: true } },
      { done: false, duration: 30, extracted_data: { result: 'callback', satisfied: false } },
      { done: false, duration: 90, extracted_data: { satisfied: true } },
    ];
    // B: 4 of 5 done, durations 100 + 50 + 50 + 40 + 10 = 250 (avg 50).
    const b: Reported[] = [
      { done: true, duration: 100, extracted_data: { result: 'lost', satisfied: false } },
      { done: true, duration: 50, extracted_data: { result: 'lost' } },
      { done: true, duration: 50, extracted_data: { result: 'booked', satisfied: true } },
      { done: true, duration: 40, extracted_data: {} },
      { done: false, duration: 10, extracted_data: { result: 'lost', satisfied: false } },
    ];
    for (const [i, call] of a.entries()) await report(agentId, ids.A![i]!, call);
    for (const [i, call] of b.entries()) await report(agentId, ids.B![i]!, call);
    await report(agentId, ids.A![4]!, { done: true, duration: 999, extracted_data: { result: 'lost' } });
    await ctx.db('calls').where({ agent_id: agentId, call_id: ids.A![4]! }).update({ deleted_at: new Date() });
    // A call of another agent that reuses a routed call_id is not one of the experiment's calls.
    const other = await ctx.build.agent(w.orgId, { name: 'Andere' });
    await report(other.id, ids.B![0]!, { done: false, duration: 500, extracted_data: {} });

    const res = await asKey(ctx.http.get(`${base(agentId)}/${experimentId}/results`)).expect(200);
    const results = expectSchema(res, ExperimentResultsSchema);
    const assigned = (await ctx.db('experiments').where({ id: experimentId }).first('calls')).calls as number;
    expect(results).toMatchObject({
      experiment_id: experimentId,
      status: 'running',
      assigned_calls: assigned,
      reported_calls: 9,
    });
    expect(results.variants.map((v) => v.name)).toEqual(['A', 'B', 'C']);
    const [va, vb, vc] = results.variants;

    expect(va).toMatchObject({ calls: 4, done: 1, done_rate: 0.25, duration_avg: 75, done_rate_p_value: null });
    expect(va!.outcomes).toEqual({
      result: { values: { booked: 2, callback: 1, lost: 0 }, missing: 1 },
      satisfied: { values: { true: 3, false: 1 }, missing: 0 },
    });
    // Wilson, z = 1.959963984540054, k = 1, n = 4: centre (p + z²/2n) / (1 + z²/n),
    // half-width z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n).
    expect(va!.done_rate_interval!.low).toBeCloseTo(0.0455872608, 8);
    expect(va!.done_rate_interval!.high).toBeCloseTo(0.6993581574, 8);

    expect(vb).toMatchObject({ calls: 5, done: 4, done_rate: 0.8, duration_avg: 50 });
    expect(vb!.outcomes).toEqual({
      result: { values: { booked: 1, callback: 0, lost: 3 }, missing: 1 },
      satisfied: { values: { true: 1, false: 2 }, missing: 2 },
    });
    expect(vb!.done_rate_interval!.low).toBeCloseTo(0.3755346298, 8);
    expect(vb!.done_rate_interval!.high).toBeCloseTo(0.9637758914, 8);
    // Pooled rate 5/9, se = sqrt(5/9 · 4/9 · (1/4 + 1/5)) = 1/3, z = (0.8 - 0.25) / (1/3) = 1.65,
    // two-sided p = erfc(1.65 / sqrt 2) = 0.0989429361.
    expect(vb!.done_rate_p_value).toBeCloseTo(0.0989429361, 6);

    // No reported call: nothing to rate or test.
    expect(vc).toEqual({
      name: 'C',
      calls: 0,
      done: 0,
      done_rate: null,
      done_rate_interval: null,
      done_rate_p_value: null,
      duration_avg: null,
      outcomes: {
        result: { values: { booked: 0, callback: 0, lost: 0 }, missing: 0 },
        satisfied: { values: { true: 0, false: 0 }, missing: 0 },
      },
    });
  });

  it('answers 404 for an unknown experiment or one of another agent, before a refused query parameter', async () => {
    const { agentId, experimentId } = await runningExperiment();
    const other = await ctx.build.freshAgent(w.orgId, 'Fremd');
    const unknown = await asKey(
      ctx.http.get(`${base(agentId)}/00000000-0000-4000-8000-000000000000/results?group_by=variant`),
    ).expect(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    await asKey(ctx.http.get(`${base(other)}/${experimentId}/results`)).expect(404);
    const refused = await asKey(ctx.http.get(`${base(agentId)}/${experimentId}/results?group_by=variant`)).expect(400);
    expect(refused.body.error.details[0].field).toBe('group_by');
  });

  it('needs agents:read and the agent in the key’s scope', async () => {
    const { agentId, experimentId } = await runningExperiment();
    const path = `${base(agentId)}/${experimentId}/results`;
    const callsOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    const denied = await ctx.http.get(path).set('X-API-Key', callsOnly.key).expect(403);
    expect(denied.body.error.message).toContain('agents:read');
    const elsewhere = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const scoped = await ctx.http.get(path).set('X-API-Key', elsewhere.key).expect(403);
    expect(scoped.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });
});
