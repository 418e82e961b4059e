import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appWithUnreachableDatabase } from '../support/broken-db.js';
import { createTestContext, type TestContext } from '../support/context.js';
import type { World } from '../support/builders.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const agentPath = () => `/v1/agents/${w.agentId}`;

describe('API key authentication', () => {
  it.each([
    ['no header', undefined],
    ['a malformed key', 'svc_live_xyz'],
    ['an upper-case hex key', 'svc_live_0123456789ABCDEF0123456789ABCDEF'],
    ['an unknown well-formed key', 'svc_live_0123456789abcdef0123456789abcdef'],
  ])('refuses %s with 401 "Invalid or missing API key"', async (_label, key) => {
    const req = ctx.http.get(agentPath());
    if (key) req.set('X-API-Key', key);
    const res = await req.expect(401);
    expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: 'Invalid or missing API key' });
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  });

  it('refuses an inactive key with its own message', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    await ctx.db('api_keys').where({ id: key.id }).update({ is_active: false });
    const res = await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(401);
    expect(res.body.error.message).toBe('API key is inactive');
  });

  it('refuses a key that was in use as soon as a change made elsewhere (plain SQL, another instance) is announced', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    const call = () => ctx.http.get(agentPath()).set('X-API-Key', key.key);
    await call().expect(200);
    await call().expect(200); // now served from the credential cache
    await ctx.db('api_keys').where({ id: key.id }).update({ is_active: false });
    // No local invalidation: only the trigger's NOTIFY reaches the app.
    await expect.poll(async () => (await call()).status, { timeout: 2000, interval: 5 }).toBe(401);
    await ctx.db('api_keys').where({ id: key.id }).delete();
    await expect
      .poll(async () => (await call()).body.error?.message, { timeout: 2000, interval: 5 })
      .toBe('Invalid or missing API key');
  });

  it('refuses a key from the moment it expires', async () => {
    const expiresAt = new Date(ctx.clock.now().getTime() + 60_000);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { expiresAt });
    await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(200);
    ctx.clock.set(expiresAt);
    const res = await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(401);
    expect(res.body.error.message).toBe('API key has expired');
    ctx.clock.set(new Date());
  });

  it('loses the reach to an organization as soon as its creator leaves it', async () => {
    const org = await ctx.build.organization();
    const user = await ctx.build.user(org.id, 'admin');
    const agent = await ctx.build.agent(org.id);
    const key = await ctx.build.apiKey(org.id, user.id);
    await ctx.http.get(`/v1/agents/${agent.id}`).set('X-API-Key', key.key).expect(200);
    const second = await ctx.build.organization();
    await ctx.build.member(user.id, second.id, 'member');
    await ctx.build.removeMember(user.id, org.id);
    await ctx.http.get(`/v1/agents/${agent.id}`).set('X-API-Key', key.key).expect(404);
    await ctx.build.removeMember(user.id, second.id);
    const res = await ctx.http.get(`/v1/agents/${agent.id}`).set('X-API-Key', key.key).expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('reaches every organization its creator is a member of', async () => {
    const second = await ctx.build.organization();
    await ctx.build.member(w.userId, second.id, 'member');
    const agent = await ctx.build.agent(second.id);
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    await ctx.http.get(`/v1/agents/${agent.id}`).set('X-API-Key', key.key).expect(200);
    const orgs = await ctx.http.get('/v1/organization').set('X-API-Key', key.key).expect(200);
    expect(orgs.body.data.map((o: { id: string }) => o.id).sort()).toEqual([w.orgId, second.id].sort());
  });

  it('records last_used_at at most once a minute and never on a failed request', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    const lastUsed = async () => (await ctx.db('api_keys').where({ id: key.id }).first('last_used_at')).last_used_at;
    await ctx.http.get(agentPath()).set('X-API-Key', 'svc_live_0123456789abcdef0123456789abcdef').expect(401);
    expect(await lastUsed()).toBeNull();
    await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(403);
    // Written in batches every few seconds: flushed here instead of waited for.
    await ctx.container.lastUsed.flush();
    expect(await lastUsed()).not.toBeNull();
    const first = (await lastUsed()) as Date;
    ctx.clock.advance(10_000);
    await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(403);
    await ctx.container.lastUsed.flush();
    expect(await lastUsed()).toEqual(first);
    ctx.clock.advance(61_000);
    await ctx.http.get(agentPath()).set('X-API-Key', key.key).expect(403);
    await ctx.container.lastUsed.flush();
    expect(((await lastUsed()) as Date).getTime()).toBeGreaterThan(first.getTime() + 60_000);
    ctx.clock.set(new Date());
  });

  it('never stores the raw key', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    const row = await ctx.db('api_keys').where({ id: key.id }).first();
    expect(JSON.stringify(row)).not.toContain(key.key);
    expect(row.key_prefix).toBe(key.key.slice(0, 13));
  });
});

describe('Dashboard token authentication', () => {
  const sign = (payload: object, options: jwt.SignOptions = {}) =>
    jwt.sign(payload, ctx.config.JWT_SECRET!, { algorithm: 'HS256', expiresIn: 60, ...options });

  it('gives developer_admin and admin every permission and member only the read ones', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    const token = ctx.build.token(member.id);
    await ctx.http.get(agentPath()).set('Authorization', `Bearer ${token}`).expect(200);
    const org = await ctx.http.get('/v1/organization').set('Authorization', `Bearer ${token}`).expect(200);
    expect(org.body.data).toHaveLength(1);
  });

  it.each([
    [
      'a token signed with another secret',
      () => jwt.sign({}, 'another-secret-another-secret-another', { subject: w.userId, expiresIn: 60 }),
    ],
    ['a token without exp', () => jwt.sign({ sub: w.userId }, ctx.config.JWT_SECRET!, { algorithm: 'HS256' })],
    [
      'an expired token',
      () => jwt.sign({ sub: w.userId, exp: Math.floor(Date.now() / 1000) - 10 }, ctx.config.JWT_SECRET!),
    ],
    ['a token of an unknown user', () => sign({}, { subject: '00000000-0000-4000-8000-000000000000' })],
    [
      'an unsigned token',
      () => jwt.sign({ sub: w.userId, exp: Math.floor(Date.now() / 1000) + 60 }, '', { algorithm: 'none' }),
    ],
    [
      'a token with a crit header naming an unknown extension (RFC 7515)',
      () =>
        sign({}, { subject: w.userId, header: { alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 } as jwt.JwtHeader }),
    ],
    [
      'a token with a crit header naming b64 (RFC 7797, not understood here)',
      () => sign({}, { subject: w.userId, header: { alg: 'HS256', crit: ['b64'], b64: true } as jwt.JwtHeader }),
    ],
    [
      'a token with an empty crit header',
      () => sign({}, { subject: w.userId, header: { alg: 'HS256', crit: [] } as jwt.JwtHeader }),
    ],
  ])('refuses %s with 401', async (_label, make) => {
    const res = await ctx.http.get(agentPath()).set('Authorization', `Bearer ${make()}`).expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('is not rate limited', async () => {
    const res = await ctx.http.get(agentPath()).set('Authorization', `Bearer ${w.token}`).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('Errors and request ids', () => {
  it('reuses a well-formed incoming X-Request-Id and replaces a bad one', async () => {
    const good = await ctx.http.get('/v1/health').set('X-Request-Id', 'abc.DEF-123_x').expect(200);
    expect(good.headers['x-request-id']).toBe('abc.DEF-123_x');
    const bad = await ctx.http.get('/v1/health').set('X-Request-Id', 'has spaces!').expect(200);
    expect(bad.headers['x-request-id']).not.toBe('has spaces!');
  });

  it('answers an unknown route with the 404 envelope and a wrong method with 405', async () => {
    const missing = await ctx.http.get('/v1/nothing-here').set('X-API-Key', w.key).expect(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', request_id: expect.any(String) });
    const wrong = await ctx.http.put('/v1/organization').set('X-API-Key', w.key).expect(405);
    expect(wrong.body.error.code).toBe('METHOD_NOT_ALLOWED');
    expect(wrong.headers.allow).toBe('GET, PATCH');
    await ctx.http.get('/elsewhere').expect(404);
  });

  it('rejects invalid JSON, a wrong content type and a non-object body with 400', async () => {
    const auth = { Authorization: `Bearer ${w.token}` };
    const badJson = await ctx.http
      .post('/v1/api-keys')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expect(badJson.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Request body is not valid JSON' });
    const text = await ctx.http
      .post('/v1/api-keys')
      .set(auth)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(400);
    expect(text.body.error.message).toBe('Content-Type must be application/json');
    const array = await ctx.http
      .post('/v1/api-keys')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send('[1,2]')
      .expect(400);
    expect(array.body.error.message).toBe('Request body must be a JSON object');
  });

  it('rejects a body over 1 MB with 413 and accepts one just under it', async () => {
    const auth = { Authorization: `Bearer ${w.token}` };
    const big = await ctx.http
      .post('/v1/api-keys')
      .set(auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(1024 * 1024) }))
      .expect(413);
    expect(big.body.error.code).toBe('VALIDATION_ERROR');
    // 50,000 three-byte characters (150 kB) are well inside the limit.
    const res = await ctx.http
      .post('/v1/api-keys')
      .set(auth)
      .send({ name: '€'.repeat(50_000), permissions: ['agents:read'] })
      .expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'name' })]);
  });

  it('answers 503 SERVICE_UNAVAILABLE without internals when the database is unreachable', async () => {
    const brokenApp = appWithUnreachableDatabase(ctx);
    const failed = await brokenApp.get(agentPath()).set('Authorization', `Bearer ${w.token}`);
    expect(failed.status).toBe(503);
    expect(failed.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is temporarily unavailable',
    });
    expect(JSON.stringify(failed.body)).not.toMatch(/ECONNREFUSED|knex|stack/i);
    const health = await brokenApp.get('/v1/health').expect(503);
    expect(health.body).toMatchObject({ status: 'degraded', checks: { database: 'unavailable' } });
  });
});
