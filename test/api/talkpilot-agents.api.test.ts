import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';
import { AgentStatusSchema } from '../../src/modules/agents/agent.openapi.js';

// Vacation mode, "the common operation" of TalkPilot's getting-started page and example files.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const agentPath = (id: string) => `/v1/agents/${id}`;
const patch = (id: string, body: object) => ctx.http.patch(agentPath(id)).set('X-API-Key', w.key).send(body);
const status = (id: string) =>
  ctx.http
    .get(`${agentPath(id)}/status`)
    .set('X-API-Key', w.key)
    .expect(200);

async function agentWithBackup() {
  const backup = (await ctx.build.agent(w.orgId, { name: 'Vertretung' })).id;
  const agent = (await ctx.build.agent(w.orgId, { name: 'Praxis' })).id;
  await patch(agent, { backup_agent_id: backup }).expect(200);
  return { agent, backup };
}

describe('TalkPilot vacation mode', () => {
  it('stores the documented PATCH body and returns the fields on the agent', async () => {
    const { agent } = await agentWithBackup();
    const res = await patch(agent, {
      vacation_mode: true,
      vacation_end: '2026-04-01T00:00:00Z',
      vacation_notdienst: true,
    }).expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({
      vacation_mode: true,
      vacation_end: '2026-04-01T00:00:00.000Z',
      vacation_notdienst: true,
    });
    const got = await ctx.http.get(agentPath(agent)).set('X-API-Key', w.key).expect(200);
    expectSchema(got, AgentSchema);
    expect(got.body).toMatchObject({ vacation_mode: true, vacation_end: '2026-04-01T00:00:00.000Z' });
    const off = await patch(agent, { vacation_mode: false }).expect(200);
    expect(off.body.vacation_mode).toBe(false);
  });

  it('routes calls to the backup agent until vacation_end, then back to the agent', async () => {
    const { agent, backup } = await agentWithBackup();
    await patch(agent, { vacation_mode: true, vacation_end: '2026-04-01T00:00:00Z' }).expect(200);
    ctx.clock.set('2026-03-20T10:00:00Z');
    expect(expectSchema(await status(agent), AgentStatusSchema)).toMatchObject({
      on_vacation: true,
      accepting_calls: false,
      routed_agent_id: backup,
      accepting_emergency_calls: false,
    });
    ctx.clock.set('2026-04-01T00:00:00Z');
    expect((await status(agent)).body).toMatchObject({
      on_vacation: false,
      vacation_mode: true,
      accepting_calls: true,
      routed_agent_id: agent,
    });
  });

  it('still takes emergency calls with vacation_notdienst', async () => {
    const { agent, backup } = await agentWithBackup();
    await patch(agent, { vacation_mode: true, vacation_notdienst: true }).expect(200);
    ctx.clock.set('2026-06-10T10:00:00Z');
    expect((await status(agent)).body).toMatchObject({
      on_vacation: true,
      vacation_end: null,
      accepting_calls: false,
      routed_agent_id: backup,
      accepting_emergency_calls: true,
    });
  });

  it('routes nowhere without a backup', async () => {
    const agent = (await ctx.build.agent(w.orgId)).id;
    await patch(agent, { vacation_mode: true }).expect(200);
    expect((await status(agent)).body).toMatchObject({ accepting_calls: false, routed_agent_id: null });
  });

  it('refuses a vacation_end that is not a date-time and non-boolean switches, changing nothing', async () => {
    const agent = (await ctx.build.agent(w.orgId)).id;
    const res = await patch(agent, {
      vacation_mode: 'ja',
      vacation_end: 'Ostern',
      vacation_notdienst: 1,
    }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'vacation_end',
      'vacation_mode',
      'vacation_notdienst',
    ]);
    const [row] = await ctx.db('agents').where({ id: agent }).select('vacation_mode', 'vacation_end');
    expect(row).toEqual({ vacation_mode: false, vacation_end: null });
  });
});

describe('agent defaults', () => {
  it('gives an API-created agent vacation mode off', async () => {
    const res = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'Neu', phone_number: ctx.build.phone() })
      .expect(201);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({ vacation_mode: false, vacation_end: null, vacation_notdienst: false });
  });
});
