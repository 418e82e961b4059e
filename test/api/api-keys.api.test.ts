import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { World } from '../support/builders.js';
import { expectSchema } from '../support/expect-schema.js';
import { z } from '../../src/openapi/zod.js';
import { ApiKeyListItemSchema, CreatedApiKeySchema } from '../../src/modules/api-keys/api-key.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('API key lifecycle', () => {
  it('creates a key, shows it once, and it works at once', async () => {
    const created = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({ name: 'Integration', permissions: ['agents:read'], rate_limit_per_minute: 30 })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'Integration',
      permissions: ['agents:read'],
      rate_limit_per_minute: 30,
      rate_limit_per_hour: 1000,
      allowed_agent_ids: null,
      is_active: true,
      expires_at: null,
      organization_id: w.orgId,
    });
    expect(created.body.key).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect(created.body.key_prefix).toBe(created.body.key.slice(0, 13));
    expect(created.body).not.toHaveProperty('key_hash');
    expectSchema(created, CreatedApiKeySchema);

    const used = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', created.body.key).expect(200);
    expect(used.headers['x-ratelimit-limit']).toBe('30');

    const list = await ctx.http.get('/v1/api-keys').set(bearer(w.token)).expect(200);
    expectSchema(list, z.object({ data: z.array(ApiKeyListItemSchema) }));
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toMatchObject({ name: 'Integration', key_prefix: created.body.key_prefix });
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
  });

  it('deactivates, reactivates and deletes a key with effect on the very next request', async () => {
    const { body: key } = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({ name: 'K', permissions: ['agents:read'] })
      .expect(201);
    const call = () => ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key);
    await call().expect(200);

    const off = await ctx.http
      .patch(`/v1/api-keys/${key.id}`)
      .set(bearer(w.token))
      .send({ is_active: false })
      .expect(200);
    expect(off.body.is_active).toBe(false);
    expect((await call().expect(401)).body.error.message).toBe('API key is inactive');

    await ctx.http.patch(`/v1/api-keys/${key.id}`).set(bearer(w.token)).send({ is_active: true }).expect(200);
    await call().expect(200);

    await ctx.http.delete(`/v1/api-keys/${key.id}`).set(bearer(w.token)).expect(204);
    expect((await call().expect(401)).body.error.message).toBe('Invalid or missing API key');
    await ctx.http.delete(`/v1/api-keys/${key.id}`).set(bearer(w.token)).expect(404);
  });

  it('expires a key at expires_at', async () => {
    const expiresAt = new Date(ctx.clock.now().getTime() + 3_600_000).toISOString();
    const { body: key } = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({ name: 'K', permissions: ['agents:read'], expires_at: expiresAt })
      .expect(201);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    ctx.clock.set(expiresAt);
    const res = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(401);
    expect(res.body.error.message).toBe('API key has expired');
    ctx.clock.set(new Date());
  });

  it('changes permissions, scope and limits with PATCH, ignoring unknown fields, and refuses the key value', async () => {
    const { body: key } = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({ name: 'K', permissions: ['agents:read'] })
      .expect(201);
    const res = await ctx.http
      .patch(`/v1/api-keys/${key.id}`)
      .set(bearer(w.token))
      .send({
        name: 'Renamed',
        permissions: ['calls:read'],
        allowed_agent_ids: [w.agentId],
        rate_limit_per_hour: 5,
        unknown: 1,
      })
      .expect(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      permissions: ['calls:read'],
      allowed_agent_ids: [w.agentId],
      rate_limit_per_hour: 5,
    });
    const forbidden = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(403);
    expect(forbidden.body.error.message).toBe('API key lacks required permission: agents:read');

    const refused = await ctx.http
      .patch(`/v1/api-keys/${key.id}`)
      .set(bearer(w.token))
      .send({ key: 'svc_live_x' })
      .expect(400);
    expect(refused.body.error.details).toEqual([{ field: 'key', message: 'The key value cannot be changed' }]);
  });

  it('lists every problem of a bad create and writes nothing', async () => {
    const before = await ctx.db('api_keys').count({ n: '*' }).first();
    const res = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({
        name: '',
        permissions: ['agents:read', 'agents:fly'],
        rate_limit_per_minute: 601,
        rate_limit_per_hour: 0,
        expires_at: 'tomorrow',
        extra: true,
      })
      .expect(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual([
      'expires_at',
      'extra',
      'name',
      'permissions[1]',
      'rate_limit_per_hour',
      'rate_limit_per_minute',
    ]);
    expect(await ctx.db('api_keys').count({ n: '*' }).first()).toEqual(before);
  });

  it('accepts the limit bounds and refuses one past them', async () => {
    const make = (body: object) =>
      ctx.http
        .post('/v1/api-keys')
        .set(bearer(w.token))
        .send({ name: 'B', permissions: ['agents:read'], ...body });
    await make({ rate_limit_per_minute: 1, rate_limit_per_hour: 1 }).expect(201);
    await make({ rate_limit_per_minute: 600, rate_limit_per_hour: 10000 }).expect(201);
    await make({ rate_limit_per_hour: 10001 }).expect(400);
  });

  it('refuses an expiry in the past and an allowed agent of another organization', async () => {
    const other = await ctx.build.world();
    const res = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(w.token))
      .send({
        name: 'K',
        permissions: ['agents:read'],
        expires_at: '2001-01-01T00:00:00Z',
        allowed_agent_ids: [w.agentId, other.agentId],
      })
      .expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'expires_at', message: 'Must be in the future' },
      { field: 'allowed_agent_ids[1]', message: 'Agent not found' },
    ]);
  });
});

describe('API key management access', () => {
  it('refuses an API key with 401 and a dedicated message', async () => {
    const res = await ctx.http.get('/v1/api-keys').set('X-API-Key', w.key).expect(401);
    expect(res.body.error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'API key management requires a dashboard login token',
    });
  });

  it('refuses admin and member roles with 403', async () => {
    for (const role of ['admin', 'member'] as const) {
      const user = await ctx.build.user(w.orgId, role);
      const res = await ctx.http
        .get('/v1/api-keys')
        .set(bearer(ctx.build.token(user.id)))
        .expect(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
  });

  it('never shows or touches the keys of another organization', async () => {
    const other = await ctx.build.world();
    const list = await ctx.http.get('/v1/api-keys').set(bearer(w.token)).expect(200);
    expect(list.body.data.some((k: { id: string }) => k.id === other.keyId)).toBe(false);
    await ctx.http.patch(`/v1/api-keys/${other.keyId}`).set(bearer(w.token)).send({ is_active: false }).expect(404);
    await ctx.http.delete(`/v1/api-keys/${other.keyId}`).set(bearer(w.token)).expect(404);
    const row = await ctx.db('api_keys').where({ id: other.keyId }).first('is_active');
    expect(row.is_active).toBe(true);
  });

  it('needs organization_id when the caller is developer_admin of several organizations', async () => {
    const user = await ctx.build.user(w.orgId, 'developer_admin');
    const second = await ctx.build.organization();
    await ctx.build.member(user.id, second.id, 'developer_admin');
    const token = ctx.build.token(user.id);
    const missing = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(token))
      .send({ name: 'K', permissions: ['agents:read'] })
      .expect(400);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'organization_id' })]);
    const made = await ctx.http
      .post('/v1/api-keys')
      .set(bearer(token))
      .send({ name: 'K', permissions: ['agents:read'], organization_id: second.id })
      .expect(201);
    expect(made.body.organization_id).toBe(second.id);
  });

  it('is 400 naming keyId when it is not a UUID', async () => {
    const res = await ctx.http.patch('/v1/api-keys/nope').set(bearer(w.token)).send({}).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'keyId', message: 'Must be a UUID' }]);
  });
});
