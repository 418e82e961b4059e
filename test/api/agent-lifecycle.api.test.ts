import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const create = (body: unknown, key = w.key) =>
  ctx.http
    .post('/v1/agents')
    .set('X-API-Key', key)
    .send(body as object);
const count = async (where: Record<string, unknown> = {}) =>
  Number((await ctx.db('agents').where(where).count({ n: '*' }).first())!.n);

describe('POST /v1/agents', () => {
  it('creates an agent with sensible defaults and answers 201 with it', async () => {
    ctx.clock.set('2026-11-23T09:00:00Z');
    const phone = ctx.build.phone();
    const res = await create({ name: 'Neuer Empfang', phone_number: phone }).expect(201);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({
      organization_id: w.orgId,
      name: 'Neuer Empfang',
      phone_number: phone,
      is_active: true,
      language: 'de',
      formality: 'formal',
      prompt: '',
      greeting: null,
      greeting_variants: null,
      schedule: null,
      backup_agent_id: null,
      bundesland: 'DE',
      short_calls_auto_edit: false,
      track_caller_name: false,
      background_audio_enabled: false,
      background_audio_type: 'office',
      background_audio_volume: 0.5,
      thinking_sound_enabled: false,
      thinking_sound_volume: 0.5,
      aic_enhancement_enabled: false,
      retention_days: null,
      metadata: null,
      created_at: '2026-11-23T09:00:00.000Z',
      updated_at: '2026-11-23T09:00:00.000Z',
    });
    expect(res.body).not.toHaveProperty('workflow');
    const get = await ctx.http.get(`/v1/agents/${res.body.id}`).set('X-API-Key', w.key).expect(200);
    expect(get.body).toEqual(res.body);
  });

  it('takes every writable field on creation, validated as PATCH validates it', async () => {
    const backup = await ctx.build.agent(w.orgId, { name: 'Backup' });
    const res = await create({
      name: 'Voll',
      phone_number: ctx.build.phone(),
      language: 'en',
      prompt: 'Prompt',
      greeting_variants: [{ greeting: 'Hi', tag: 'vip' }],
      schedule: { timezone: 'Europe/Berlin', rules: [{ days: [1], start_time: '08:00', end_time: '12:00' }] },
      backup_agent_id: backup.id,
      bundesland: 'BY',
      is_active: false,
    }).expect(201);
    expect(res.body).toMatchObject({ language: 'en', backup_agent_id: backup.id, bundesland: 'BY', is_active: false });
  });

  it('strips spaces, dashes and brackets from the phone number', async () => {
    const res = await create({ name: 'Formatiert', phone_number: '+49 (30) 1234-5678' }).expect(201);
    expect(res.body.phone_number).toBe('+493012345678');
  });

  it('is 409 CONFLICT for a phone number another agent has, and creates nothing', async () => {
    const phone = ctx.build.phone();
    await ctx.build.agent(w.orgId, { phone_number: phone });
    const before = await count();
    const res = await create({ name: 'Doppelt', phone_number: phone }).expect(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      details: [{ field: 'phone_number', message: 'Already used by another agent' }],
    });
    expect(await count()).toBe(before);
  });

  it('is 409 also when the phone number belongs to an agent of another organization', async () => {
    const other = await ctx.build.world();
    const { phone_number } = await ctx.db('agents').where({ id: other.agentId }).first('phone_number');
    await create({ name: 'Doppelt', phone_number }).expect(409);
  });

  it.each([
    [{ phone_number: '+4930123456' }, 'name'],
    [{ name: 'x' }, 'phone_number'],
    [{ name: 'x', phone_number: '030123456' }, 'phone_number'],
    [{ name: 'x', phone_number: '+0123' }, 'phone_number'],
    [{ name: 'x', phone_number: '+4930123456', retention_days: 30 }, 'retention_days'],
    [{ name: 'x', phone_number: '+4930123456', metadata: {} }, 'metadata'],
    [{ name: 'x', phone_number: '+4930123456', id: '00000000-0000-4000-8000-000000000000' }, 'id'],
    [{ name: 'x', phone_number: '+4930123456', workflow: null }, 'workflow'],
    [{ name: 'x', phone_number: '+4930123456', colour: 'red' }, 'colour'],
    [{ name: 'x', phone_number: '+4930123456', prompt: 'ä'.repeat(50_001) }, 'prompt'],
    [{ name: 'x', phone_number: '+4930123456', organization_id: 'nope' }, 'organization_id'],
    [{ name: 'x', phone_number: '+4930123456', post_call_webhook_url: 'ftp://example.com' }, 'post_call_webhook_url'],
    [
      { name: 'x', phone_number: '+4930123456', backup_agent_id: '00000000-0000-4000-8000-000000000000' },
      'backup_agent_id',
    ],
  ])('refuses %j naming %s and creates nothing', async (body, field) => {
    const before = await count();
    const res = await create(body).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(await count()).toBe(before);
  });

  it('refuses a backup agent of another organization', async () => {
    const other = await ctx.build.world();
    const res = await create({ name: 'x', phone_number: ctx.build.phone(), backup_agent_id: other.agentId }).expect(
      400,
    );
    expect(res.body.error.details).toEqual([
      { field: 'backup_agent_id', message: 'Must be another agent of the same organization' },
    ]);
  });

  describe('organization_id', () => {
    it('is required when the caller can create agents in several organizations', async () => {
      const second = await ctx.build.organization();
      const user = await ctx.build.user(w.orgId, 'developer_admin');
      await ctx.build.member(user.id, second.id, 'admin');
      const key = await ctx.build.apiKey(w.orgId, user.id);
      const before = await count();
      const res = await create({ name: 'x', phone_number: ctx.build.phone() }, key.key).expect(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'organization_id' })]);
      expect(await count()).toBe(before);

      const created = await create(
        { name: 'x', phone_number: ctx.build.phone(), organization_id: second.id },
        key.key,
      ).expect(201);
      expect(created.body.organization_id).toBe(second.id);
    });

    it('is not needed when the caller may write agents in only one of its organizations', async () => {
      const second = await ctx.build.organization();
      const user = await ctx.build.user(w.orgId, 'admin');
      await ctx.build.member(user.id, second.id, 'member');
      const res = await ctx.http
        .post('/v1/agents')
        .set('Authorization', `Bearer ${ctx.build.token(user.id)}`)
        .send({ name: 'x', phone_number: ctx.build.phone() })
        .expect(201);
      expect(res.body.organization_id).toBe(w.orgId);
    });

    it('is 404 for an organization the caller does not reach', async () => {
      const other = await ctx.build.world();
      const before = await count({ organization_id: other.orgId });
      const res = await create({ name: 'x', phone_number: ctx.build.phone(), organization_id: other.orgId }).expect(
        404,
      );
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect(await count({ organization_id: other.orgId })).toBe(before);
    });

    it('is 403 in an organization where the caller is only a member', async () => {
      const second = await ctx.build.organization();
      const user = await ctx.build.user(w.orgId, 'admin');
      await ctx.build.member(user.id, second.id, 'member');
      await ctx.http
        .post('/v1/agents')
        .set('Authorization', `Bearer ${ctx.build.token(user.id)}`)
        .send({ name: 'x', phone_number: ctx.build.phone(), organization_id: second.id })
        .expect(403);
    });
  });

  describe('access', () => {
    it('is 403 FORBIDDEN naming agents:write for a key without it', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
      const before = await count();
      const res = await create({ name: 'x', phone_number: ctx.build.phone() }, key.key).expect(403);
      expect(res.body.error).toMatchObject({
        code: 'FORBIDDEN',
        message: 'API key lacks required permission: agents:write',
      });
      expect(await count()).toBe(before);
    });

    it('is 403 for a key restricted to certain agents', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
      const before = await count();
      const res = await create({ name: 'x', phone_number: ctx.build.phone() }, key.key).expect(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
      expect(await count()).toBe(before);
    });
  });
});

describe('DELETE /v1/agents/{agentId}', () => {
  const remove = (id: string, key = w.key) => ctx.http.delete(`/v1/agents/${id}`).set('X-API-Key', key);

  it('answers 204 without a body and removes the agent with its tools and contacts', async () => {
    const agent = await ctx.build.agent(w.orgId);
    await ctx
      .db('tools')
      .insert({ agent_id: agent.id, organization_id: w.orgId, name: 'end_call', tool_type: 'end_call', config: {} });
    await ctx.db('contacts').insert({ agent_id: agent.id, organization_id: w.orgId, first_name: 'Anna' });
    const res = await remove(agent.id).expect(204);
    expect(res.text).toBe('');
    expect(await count({ id: agent.id })).toBe(0);
    expect(await ctx.db('tools').where({ agent_id: agent.id })).toEqual([]);
    expect(await ctx.db('contacts').where({ agent_id: agent.id })).toEqual([]);
    await ctx.http.get(`/v1/agents/${agent.id}`).set('X-API-Key', w.key).expect(404);
    await remove(agent.id).expect(404);
  });

  it('is 409 while another agent names it as backup, and deletes after the backup is cleared', async () => {
    const backup = await ctx.build.agent(w.orgId, { name: 'Backup' });
    const main = await ctx.build.agent(w.orgId, { name: 'Main', backup_agent_id: backup.id });
    const res = await remove(backup.id).expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.details[0].message).toContain(main.id);
    expect(await count({ id: backup.id })).toBe(1);
    await ctx.http.patch(`/v1/agents/${main.id}`).set('X-API-Key', w.key).send({ backup_agent_id: null }).expect(200);
    await remove(backup.id).expect(204);
  });

  it('is 403 FORBIDDEN without agents:write and keeps the agent', async () => {
    const agent = await ctx.build.agent(w.orgId);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    await remove(agent.id, key.key).expect(403);
    expect(await count({ id: agent.id })).toBe(1);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope and keeps the agent', async () => {
    const agent = await ctx.build.agent(w.orgId);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const res = await remove(agent.id, key.key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    expect(await count({ id: agent.id })).toBe(1);
  });

  it('is 404 for an agent of another organization and keeps it', async () => {
    const other = await ctx.build.world();
    await remove(other.agentId).expect(404);
    expect(await count({ id: other.agentId })).toBe(1);
  });

  it('is 400 naming agentId when it is not a UUID', async () => {
    const res = await remove('123').expect(400);
    expect(res.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });
});
