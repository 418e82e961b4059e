import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteAnswerSchema } from '../../src/modules/runtime/route.schemas.js';
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

const schedule = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
  exceptions: [{ date: '2026-12-24', closed: true as const, note: 'Heiligabend' }],
};
const ANNA = '+4917612345678';
const OPEN = '2026-11-23T10:00:00+01:00';
const EVE = '2026-12-24T19:30:00+01:00';

const route = (body: Record<string, unknown>, key = w.key) =>
  ctx.http.post('/v1/runtime/route').set('X-API-Key', key).send(body);
const phoneOf = async (agentId: string) =>
  ((await ctx.db('agents').where({ id: agentId }).first('phone_number')) as { phone_number: string }).phone_number;

/** An agent with hours, a Christmas Eve closure, a greeting by name, a backup, a tool and a VIP contact. */
async function practice() {
  const backup = await ctx.build.agent(w.orgId, { name: 'Vertretung', greeting: 'Hier ist die Vertretung' });
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis' });
  await ctx.http
    .patch(`/v1/agents/${agent.id}`)
    .set('X-API-Key', w.key)
    .send({
      schedule,
      greeting: 'Guten Tag, Praxis Müller',
      greeting_variants: [{ greeting: 'Hallo {{anrede}} {{nachname}}!', tag: 'vip' }],
      backup_agent_id: backup.id,
    })
    .expect(200);
  await ctx.http
    .post(`/v1/agents/${agent.id}/tools`)
    .set('X-API-Key', w.key)
    .send({ name: 'auflegen', tool_type: 'end_call', description: 'Beendet' })
    .expect(201);
  await ctx.db('contacts').insert({
    agent_id: agent.id,
    organization_id: w.orgId,
    first_name: 'Anna',
    last_name: 'Schmidt',
    salutation: 'Frau',
    mobile_number: ANNA,
    tags: ['VIP'],
  });
  return { id: agent.id, backupId: backup.id, number: await phoneOf(agent.id) };
}

describe('POST /v1/runtime/route', () => {
  it('answers who takes the call, why, and the configuration to run, as /simulate decides', async () => {
    const p = await practice();
    const res = await route({ called_number: p.number, caller_number: ANNA, call_id: 'route-1', at: OPEN }).expect(200);
    const answer = expectSchema(res, RouteAnswerSchema);
    expect(answer).toMatchObject({
      call_id: 'route-1',
      called_number: p.number,
      caller_number: ANNA,
      agent_id: p.id,
      answered_by_agent_id: p.id,
      via: 'self',
      reason: 'open',
      accepting_calls: true,
      experiment: null,
    });
    const simulated = await ctx.http
      .post(`/v1/agents/${p.id}/simulate`)
      .set('X-API-Key', w.key)
      .send({ at: OPEN, caller_number: ANNA })
      .expect(200);
    expect(answer.decision).toEqual(simulated.body);
    const latest = await ctx.db('agent_versions').where({ agent_id: p.id }).orderBy('version', 'desc').first();
    expect(answer.configuration).toMatchObject({
      agent_id: p.id,
      version: latest.version,
      version_id: latest.id,
      greeting: 'Hallo Frau Schmidt!',
      greeting_variant_index: 0,
    });
    expect(answer.configuration!.agent).toMatchObject({ name: 'Praxis', greeting: 'Guten Tag, Praxis Müller' });
    expect(answer.configuration!.tools.map((t) => t.name)).toEqual(['auflegen']);
  });

  it("routes to the backup when the agent is closed and runs the backup's configuration", async () => {
    const p = await practice();
    const res = await route({ called_number: p.number, caller_number: null, call_id: 'route-2', at: EVE }).expect(200);
    const answer = expectSchema(res, RouteAnswerSchema);
    expect(answer).toMatchObject({
      answered_by_agent_id: p.backupId,
      via: 'backup',
      reason: 'exception',
      accepting_calls: false,
      caller_number: null,
    });
    expect(answer.configuration).toMatchObject({ agent_id: p.backupId, greeting: 'Hier ist die Vertretung' });
    ctx.clock.set(EVE);
    const status = await ctx.http.get(`/v1/agents/${p.id}/status`).set('X-API-Key', w.key).expect(200);
    expect(status.body.routed_agent_id).toBe(answer.answered_by_agent_id);
  });

  it('accepts the dialled number in written forms and an anonymous caller', async () => {
    const p = await practice();
    const national = `0${p.number.slice(3)}`;
    const res = await route({ called_number: national, caller_number: 'anonymous', call_id: 'route-3', at: OPEN });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ called_number: p.number, caller_number: null, agent_id: p.id });
  });

  it('answers 404 for an unknown number, a number without agent and a number of another organization', async () => {
    await route({ called_number: '+4930999999999', call_id: 'x' }).expect(404);
    const free = await ctx.http.post('/v1/phone-numbers').set('X-API-Key', w.key).send({ number: ctx.build.phone() });
    await route({ called_number: free.body.number, call_id: 'x' }).expect(404);
    const other = await ctx.build.world();
    const theirs = await phoneOf(other.agentId);
    const res = await route({ called_number: theirs, call_id: 'x' }).expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('needs runtime:route and refuses a body without call_id naming it', async () => {
    const p = await practice();
    const reader = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const denied = await route({ called_number: p.number, call_id: 'x' }, reader.key).expect(403);
    expect(denied.body.error.message).toContain('runtime:route');
    const bad = await route({ called_number: p.number }).expect(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toContain('call_id');
  });
});
