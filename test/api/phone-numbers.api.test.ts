import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PhoneNumberSchema } from '../../src/modules/phone-numbers/phone-number.schemas.js';
import { pino } from 'pino';
import { REDACT_PATHS } from '../../src/logger.js';
import { SecretSealer } from '../../src/modules/phone-numbers/sealed-secret.js';
import { paginated } from '../../src/openapi/common.js';
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

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const SIP = { termination_uri: 'sip:trunk.example.com', username: 'trunk-user', password: 'geheim-4711' };

const create = (body: Record<string, unknown>, key = w.key) =>
  ctx.http.post('/v1/phone-numbers').set('X-API-Key', key).send(body);
const patch = (id: string, body: Record<string, unknown>, key = w.key) =>
  ctx.http.patch(`/v1/phone-numbers/${id}`).set('X-API-Key', key).send(body);
const agentPhone = async (agentId: string) =>
  ((await ctx.db('agents').where({ id: agentId }).first('phone_number')) as { phone_number: string }).phone_number;
const numberRow = (id: string) => ctx.db('phone_numbers').where({ id }).first();

describe('POST /v1/phone-numbers', () => {
  it('registers a number with label, provider and sealed SIP credentials that are never returned', async () => {
    const number = ctx.build.phone();
    const res = await create({ number, label: 'Zentrale', provider: 'sipgate', sip: SIP }).expect(201);
    const body = expectSchema(res, PhoneNumberSchema);
    expect(body).toMatchObject({
      number,
      label: 'Zentrale',
      provider: 'sipgate',
      sip_configured: true,
      agent_id: null,
    });
    expect(JSON.stringify(res.body)).not.toContain('geheim');
    const row = await numberRow(body.id);
    expect(row.sip_credentials).not.toContain('geheim');
    expect(row.sip_credentials).toMatch(/^v1\./);
    const opened = new SecretSealer(ctx.config.SECRETS_KEY).open(row.sip_credentials as string);
    expect(JSON.parse(opened)).toEqual(SIP);
    const read = await ctx.http.get(`/v1/phone-numbers/${body.id}`).set('X-API-Key', w.key).expect(200);
    expect(JSON.stringify(read.body)).not.toContain('geheim');
  });

  it('normalises the number and refuses one registered anywhere with 409 CONFLICT', async () => {
    const res = await create({ number: '030 / 1234 5678' }).expect(201);
    expect(res.body.number).toBe('+493012345678');
    const other = await ctx.build.world();
    const taken = await create({ number: '+493012345678' }, other.key).expect(409);
    expect(taken.body.error.code).toBe('CONFLICT');
    expect(taken.body.error.details[0].field).toBe('number');
    // An agent's number is a number resource too.
    const agentNumber = await agentPhone(w.agentId);
    expect((await create({ number: agentNumber }).expect(409)).body.error.code).toBe('CONFLICT');
  });

  it('refuses an unknown provider and an unknown field naming them, storing nothing', async () => {
    const number = ctx.build.phone();
    const res = await create({ number, provider: 'vodafone', colour: 'red' }).expect(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['provider']));
    expect(await ctx.db('phone_numbers').where({ number }).first()).toBeUndefined();
  });

  it('needs phone_numbers:write and refuses keys restricted to agents', async () => {
    const reader = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['phone_numbers:read'] });
    const res = await create({ number: ctx.build.phone() }, reader.key).expect(403);
    expect(res.body.error.message).toContain('phone_numbers:write');
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    expect((await create({ number: ctx.build.phone() }, scoped.key).expect(403)).body.error.code).toBe(
      'AGENT_NOT_ACCESSIBLE',
    );
  });
});

describe('assigning numbers to agents', () => {
  it('moves an agent onto a number, releases its previous one and shows it as the agent phone_number', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const before = await agentPhone(agentId);
    const number = ctx.build.phone();
    const created = await create({ number, agent_id: agentId }).expect(201);
    expect(created.body.agent_id).toBe(agentId);
    expect(await agentPhone(agentId)).toBe(number);
    const agent = await ctx.http.get(`/v1/agents/${agentId}`).set('X-API-Key', w.key).expect(200);
    expect(agent.body.phone_number).toBe(number);
    const previous = await ctx.db('phone_numbers').where({ number: before }).first();
    expect(previous.agent_id).toBeNull();
    // The released number can go to another agent, whose own number is released in turn.
    const second = await ctx.build.freshAgent(w.orgId);
    await patch(previous.id, { agent_id: second }).expect(200);
    expect(await agentPhone(second)).toBe(before);
  });

  it("refuses to release, move away or delete an agent's only number (409), changing nothing", async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const phone = await agentPhone(agentId);
    const row = await ctx.db('phone_numbers').where({ number: phone }).first();
    expect(row.agent_id).toBe(agentId);
    expect((await patch(row.id, { agent_id: null, label: 'x' }).expect(409)).body.error.code).toBe('CONFLICT');
    const other = await ctx.build.freshAgent(w.orgId);
    await patch(row.id, { agent_id: other }).expect(409);
    await ctx.http.delete(`/v1/phone-numbers/${row.id}`).set('X-API-Key', w.key).expect(409);
    expect(await numberRow(row.id)).toEqual(row);
    expect(await agentPhone(agentId)).toBe(phone);
  });

  it('refuses an agent of another organization naming agent_id', async () => {
    const other = await ctx.build.world();
    const res = await create({ number: ctx.build.phone(), agent_id: other.agentId }).expect(400);
    expect(res.body.error.details[0].field).toBe('agent_id');
  });

  it('deletes a free number with 204', async () => {
    const created = await create({ number: ctx.build.phone() }).expect(201);
    await ctx.http.delete(`/v1/phone-numbers/${created.body.id}`).set('X-API-Key', w.key).expect(204);
    expect(await numberRow(created.body.id)).toBeUndefined();
  });

  it('releases the number when its agent is deleted', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const phone = await agentPhone(agentId);
    await ctx.http.delete(`/v1/agents/${agentId}`).set('X-API-Key', w.key).expect(204);
    expect((await ctx.db('phone_numbers').where({ number: phone }).first()).agent_id).toBeNull();
  });
});

describe('agent creation with phone_number', () => {
  it('creates the number resource assigned to the new agent', async () => {
    const number = ctx.build.phone();
    const res = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'Mit Nummer', phone_number: number })
      .expect(201);
    const row = await ctx.db('phone_numbers').where({ number }).first();
    expect(row).toMatchObject({ organization_id: w.orgId, agent_id: res.body.id, provider: null });
  });

  it('takes over a free number of the organization, keeping its label', async () => {
    const number = ctx.build.phone();
    const free = await create({ number, label: 'Importiert', provider: 'telekom' }).expect(201);
    const res = await ctx.http.post('/v1/agents').set('X-API-Key', w.key).send({ name: 'Neu', phone_number: number });
    expect(res.status).toBe(201);
    expect(await numberRow(free.body.id)).toMatchObject({ agent_id: res.body.id, label: 'Importiert' });
  });

  it("answers 409 for another agent's number or another organization's, creating no agent", async () => {
    const held = await agentPhone(w.agentId);
    const first = await ctx.http.post('/v1/agents').set('X-API-Key', w.key).send({ name: 'Dup', phone_number: held });
    expect(first.status).toBe(409);
    const other = await ctx.build.world();
    const foreign = ctx.build.phone();
    await create({ number: foreign }, other.key).expect(201);
    const second = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'Dup', phone_number: foreign });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('CONFLICT');
    expect(await ctx.db('agents').where({ name: 'Dup' }).first()).toBeUndefined();
  });
});

describe('GET /v1/phone-numbers', () => {
  it('lists the numbers of the organization only, filtered by assignment', async () => {
    const other = await ctx.build.world();
    await create({ number: ctx.build.phone() }, other.key).expect(201);
    const res = await ctx.http.get('/v1/phone-numbers?assigned=true&limit=100').set('X-API-Key', w.key).expect(200);
    const page = expectSchema(res, paginated(PhoneNumberSchema));
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((n) => n.organization_id === w.orgId && n.agent_id !== null)).toBe(true);
    const mine = await ctx.http.get(`/v1/phone-numbers?agent_id=${w.agentId}`).set('X-API-Key', w.key).expect(200);
    expect(mine.body.data.map((n: { number: string }) => n.number)).toEqual([await agentPhone(w.agentId)]);
  });

  it("answers 404 for another organization's number and an unknown id", async () => {
    const other = await ctx.build.world();
    const theirs = await create({ number: ctx.build.phone() }, other.key).expect(201);
    await ctx.http.get(`/v1/phone-numbers/${theirs.body.id}`).set('X-API-Key', w.key).expect(404);
    await ctx.http.get(`/v1/phone-numbers/${UNKNOWN}`).set('X-API-Key', w.key).expect(404);
    await patch(theirs.body.id, { label: 'mine' }).expect(404);
    expect((await numberRow(theirs.body.id)).label).toBeNull();
  });
});

describe('SIP credentials', () => {
  it('replaces and removes them through PATCH', async () => {
    const created = await create({ number: ctx.build.phone(), sip: SIP }).expect(201);
    const changed = await patch(created.body.id, { sip: { ...SIP, password: 'neu-0815' } }).expect(200);
    expect(changed.body.sip_configured).toBe(true);
    const opened = new SecretSealer(ctx.config.SECRETS_KEY).open((await numberRow(created.body.id)).sip_credentials);
    expect(JSON.parse(opened).password).toBe('neu-0815');
    expect((await patch(created.body.id, { sip: null }).expect(200)).body.sip_configured).toBe(false);
  });

  it('has no key to seal with when the server has no SECRETS_KEY (the service answers 503 then)', async () => {
    const sealer = new SecretSealer(undefined);
    expect(sealer.available).toBe(false);
    expect(() => sealer.seal('x')).toThrow('SECRETS_KEY');
  });

  it('does not open a sealed value under another key or after a change', () => {
    const a = new SecretSealer('11'.repeat(32));
    const sealed = a.seal('secret');
    expect(a.open(sealed)).toBe('secret');
    expect(() => new SecretSealer('22'.repeat(32)).open(sealed)).toThrow();
    const [v, iv, tag, data] = sealed.split('.');
    const flipped = `${v}.${iv}.${tag}.${data!.slice(0, -2)}AA`;
    expect(() => a.open(flipped)).toThrow();
  });
});

describe('the log', () => {
  it('cuts SIP credentials wherever a logged object carries them', () => {
    const lines: string[] = [];
    const logger = pino(
      { redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
      { write: (l: string) => lines.push(l) },
    );
    logger.info({ sip: SIP, body: { sip: SIP }, sip_credentials: 'v1.a.b.c' }, 'number');
    expect(lines.join('')).not.toMatch(/geheim|trunk-user|v1\.a/);
  });
});

describe('the audit log', () => {
  it('records a number write with its organization and resource, without the credentials', async () => {
    const res = await ctx.http
      .post('/v1/phone-numbers')
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-number-1')
      .send({ number: ctx.build.phone(), sip: SIP })
      .expect(201);
    const rows = await ctx.db('audit_log').where({ request_id: 'audit-number-1' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: 'phone-numbers.create',
      organization_id: w.orgId,
      resource_id: res.body.id,
    });
    expect(JSON.stringify(rows)).not.toContain('geheim');
  });
});
