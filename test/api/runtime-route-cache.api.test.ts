import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteAnswerSchema, type RouteAnswer } from '../../src/modules/runtime/route.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

/**
 * The routing answer keeps numbers and configurations in the read cache: every change a call would
 * see must reach the next answer, on the instance that wrote it and on another one (this file's app
 * is the first instance, `other` a second app with its own read cache on the same database).
 */
let ctx: TestContext;
let w: World;
let other: { http: ReturnType<typeof supertest>; stop(): Promise<void> };
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const { app, container } = ctx.anotherApp();
  await container.cache.start();
  other = {
    http: supertest(app),
    stop: async () => {
      await container.cache.stop();
      await container.lastUsed.close();
    },
  };
});
afterAll(async () => {
  await other?.stop();
  await ctx?.close();
});

const ANNA = '+4917612345678';
const OPEN = '2026-11-23T10:00:00+01:00';
const schedule = {
  timezone: 'Europe/Berlin',
  rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
  exceptions: [],
};

const write = () => ({
  post: (path: string, body: object = {}) => ctx.http.post(path).set('X-API-Key', w.key).send(body),
  patch: (path: string, body: object) => ctx.http.patch(path).set('X-API-Key', w.key).send(body),
  put: (path: string, body: object) => ctx.http.put(path).set('X-API-Key', w.key).send(body),
  delete: (path: string) => ctx.http.delete(path).set('X-API-Key', w.key),
});

type Call = { called_number: string; caller_number?: string | null };

/** The answer of both instances to the same call (they must agree); each must answer `status`. */
async function routeBoth(call: Call, status = 200): Promise<RouteAnswer[]> {
  const body = { caller_number: null, call_id: 'cache-1', at: OPEN, ...call };
  const answers: RouteAnswer[] = [];
  for (const instance of [ctx.http, other.http]) {
    const res = await instance.post('/v1/runtime/route').set('X-API-Key', w.key).send(body);
    expect(res.status).toBe(status);
    if (status === 200) answers.push(expectSchema(res, RouteAnswerSchema));
  }
  if (answers.length === 2) expect(answers[1]).toEqual(answers[0]);
  return answers;
}

const phoneOf = async (agentId: string) =>
  ((await ctx.db('agents').where({ id: agentId }).first('phone_number')) as { phone_number: string }).phone_number;

/** An agent open on weekdays with a backup and a contact; answered once by both instances, so both keep it. */
async function practice() {
  const backup = await ctx.build.agent(w.orgId, { name: 'Vertretung', greeting: 'Hier ist die Vertretung' });
  const agent = await ctx.build.agent(w.orgId, { name: 'Praxis', greeting: 'Guten Tag' });
  await write().patch(`/v1/agents/${agent.id}`, { schedule, backup_agent_id: backup.id }).expect(200);
  await ctx.db('contacts').insert({
    agent_id: agent.id,
    organization_id: w.orgId,
    first_name: 'Anna',
    last_name: 'Schmidt',
    mobile_number: ANNA,
  });
  const number = await phoneOf(agent.id);
  const [answer] = await routeBoth({ called_number: number });
  expect(answer!.answered_by_agent_id).toBe(agent.id);
  return { id: agent.id, backupId: backup.id, number };
}

/** The statements a request makes on the test's pool (prepared ones included: they emit knex's event). */
async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (query: { sql: string }) => seen.push(query.sql);
  ctx.db.on('query', listener);
  try {
    await request();
  } finally {
    ctx.db.off('query', listener);
  }
  return seen.filter((sql) =>
    /phone_numbers|agent_versions|employees|forwarding_slots|tools|contacts|experiments/.test(sql),
  );
}

describe('the routing answer from the read cache', () => {
  it('reads only the caller’s contacts once the number and configurations are kept, nothing for an unknown caller', async () => {
    const p = await practice();
    const route = (caller: string | null) =>
      ctx.http
        .post('/v1/runtime/route')
        .set('X-API-Key', w.key)
        .send({ called_number: p.number, caller_number: caller, call_id: 'cache-2', at: OPEN })
        .expect(200);
    await route(ANNA);
    const known = await statementsOf(() => route(ANNA));
    expect(known).toHaveLength(1);
    expect(known[0]).toContain('FROM contacts');
    expect(await statementsOf(() => route(null))).toEqual([]);
    expect((await route(ANNA)).body.decision.contact.name).toBe('Anna Schmidt');
  });

  it('follows a number assigned to another agent and a new label on both instances', async () => {
    const p = await practice();
    const newNumber = ctx.build.phone();
    const created = await write()
      .post('/v1/phone-numbers', { number: newNumber, label: 'Neu', agent_id: p.id })
      .expect(201);
    // The agent moved onto the new number; its old one is free and no longer routes.
    await routeBoth({ called_number: p.number }, 404);
    const [moved] = await routeBoth({ called_number: newNumber });
    expect(moved).toMatchObject({ agent_id: p.id, phone_number: { label: 'Neu' } });
    await write().patch(`/v1/phone-numbers/${created.body.id}`, { label: 'Zentrale' }).expect(200);
    const [relabelled] = await routeBoth({ called_number: newNumber });
    expect(relabelled!.phone_number.label).toBe('Zentrale');
    // Back onto the old number: the new one is released.
    const old = await ctx.db('phone_numbers').where({ number: p.number }).first('id');
    await write().patch(`/v1/phone-numbers/${old.id}`, { agent_id: p.id }).expect(200);
    await routeBoth({ called_number: newNumber }, 404);
    const [back] = await routeBoth({ called_number: p.number });
    expect(back).toMatchObject({ agent_id: p.id, answered_by_agent_id: p.id, phone_number: { id: old.id } });
  });

  it("follows the agent's greeting, workflow and schedule on both instances", async () => {
    const p = await practice();
    await write().patch(`/v1/agents/${p.id}`, { greeting: 'Neue Begrüßung' }).expect(200);
    const [greeted] = await routeBoth({ called_number: p.number });
    expect(greeted!.configuration!.greeting).toBe('Neue Begrüßung');
    const latest = await ctx.db('agent_versions').where({ agent_id: p.id }).orderBy('version', 'desc').first();
    expect(greeted!.configuration).toMatchObject({ version_id: latest.id, version: latest.version });

    const workflow = {
      name: 'Aufnahme',
      description: 'Nimmt Anliegen auf',
      steps: [{ id: 'begruessung', name: 'Begrüßung', description: 'Begrüßen', completion: 'begrüßt', next: [] }],
    };
    await write().put(`/v1/agents/${p.id}/workflow`, workflow).expect(200);
    const [withWorkflow] = await routeBoth({ called_number: p.number });
    expect(withWorkflow!.configuration!.workflow).toMatchObject({ name: 'Aufnahme' });

    const closedToday = { ...schedule, exceptions: [{ date: '2026-11-23', closed: true, note: 'Betriebsausflug' }] };
    await write().patch(`/v1/agents/${p.id}`, { schedule: closedToday }).expect(200);
    const [closed] = await routeBoth({ called_number: p.number });
    expect(closed).toMatchObject({ reason: 'exception', answered_by_agent_id: p.backupId, via: 'backup' });
    expect(closed!.configuration).toMatchObject({ agent_id: p.backupId, greeting: 'Hier ist die Vertretung' });
  });

  it('follows tools, employees and forwarding slots on both instances', async () => {
    const p = await practice();
    const tool = await write()
      .post(`/v1/agents/${p.id}/tools`, { name: 'auflegen', tool_type: 'end_call', description: 'Beendet' })
      .expect(201);
    const [withTool] = await routeBoth({ called_number: p.number });
    expect(withTool!.configuration!.tools.map((t) => t.name)).toEqual(['auflegen']);
    expect(withTool!.decision.tools).toEqual(['auflegen']);
    await write().delete(`/v1/agents/${p.id}/tools/${tool.body.id}`).expect(204);
    expect((await routeBoth({ called_number: p.number }))[0]!.configuration!.tools).toEqual([]);

    const eva = await write()
      .post(`/v1/agents/${p.id}/employees`, { name: 'Eva', phone_number: '+4930111222' })
      .expect(201);
    await write()
      .post(`/v1/agents/${p.id}/forwarding-slots`, { slotnummer: '01', cases: 'Termine', prioritaet_1: 'Eva' })
      .expect(201);
    const [forwarded] = await routeBoth({ called_number: p.number });
    expect(forwarded!.forwarding_target).toMatchObject({ employee_id: eva.body.id, available: true });
    await write().patch(`/v1/agents/${p.id}/employees/${eva.body.id}`, { status: 'urlaub' }).expect(200);
    const [away] = await routeBoth({ called_number: p.number });
    expect(away!.forwarding_target).toBeNull();
    expect(away!.decision.transfer_targets).toMatchObject([{ employee_id: eva.body.id, available: false }]);
  });

  it('assigns variants from the start of an experiment and none after its stop, on both instances', async () => {
    const p = await practice();
    await write().patch(`/v1/agents/${p.id}`, { greeting: 'Variante neu' }).expect(200);
    const version = await ctx.db('agent_versions').where({ agent_id: p.id }).orderBy('version', 'desc').first();
    const experiment = await write()
      .post(`/v1/agents/${p.id}/experiments`, {
        name: 'Begrüßung',
        variants: [
          { name: 'A', current: true, weight: 50 },
          { name: 'B', version_id: version.id, weight: 50 },
        ],
      })
      .expect(201);
    expect((await routeBoth({ called_number: p.number }))[0]!.experiment).toBeNull();
    const path = `/v1/agents/${p.id}/experiments/${experiment.body.id}`;
    await write().post(`${path}/start`).expect(200);
    const [assigned] = await routeBoth({ called_number: p.number });
    expect(assigned!.experiment).toMatchObject({ id: experiment.body.id, variant: expect.stringMatching(/^[AB]$/) });
    await write().post(`${path}/stop`).expect(200);
    expect((await routeBoth({ called_number: p.number }))[0]!.experiment).toBeNull();
  });

  it('answers the same with the read cache off, where every answer reads the database', async () => {
    const p = await practice();
    const { app } = ctx.anotherApp({ READ_CACHE_ENABLED: false });
    const closed = { ...schedule, exceptions: [{ date: '2026-11-24', closed: true, note: 'zu' }] };
    await write().patch(`/v1/agents/${p.id}`, { schedule: closed }).expect(200);
    for (const at of [OPEN, '2026-11-24T10:00:00+01:00']) {
      const body = { called_number: p.number, caller_number: ANNA, call_id: 'cache-4', at };
      const [cached] = await routeBoth(body);
      const uncached = await supertest(app).post('/v1/runtime/route').set('X-API-Key', w.key).send(body).expect(200);
      expect(uncached.body).toEqual(cached);
    }
  });

  it('follows a change made with plain SQL once it is announced', async () => {
    const p = await practice();
    await ctx.db('tools').insert({ agent_id: p.id, organization_id: w.orgId, name: 'von_hand', tool_type: 'end_call' });
    for (const instance of [ctx.http, other.http]) {
      const tools = async () =>
        (
          await instance
            .post('/v1/runtime/route')
            .set('X-API-Key', w.key)
            .send({ called_number: p.number, call_id: 'cache-3', at: OPEN })
        ).body.configuration.tools.map((t: { name: string }) => t.name);
      await expect.poll(tools, { timeout: 2000, interval: 5 }).toEqual(['von_hand']);
    }
  });
});
