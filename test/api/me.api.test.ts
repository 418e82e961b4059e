import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { MeSchema } from '../../src/modules/me/me.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const bearer = (token: string) => `Bearer ${token}`;
const userRow = (id: string) => ctx.db('users').where({ id }).first('name', 'webhook_url', 'updated_at');

describe('GET /v1/me', () => {
  it('returns the signed-in user with memberships and no webhook URL yet', async () => {
    const other = await ctx.build.organization();
    await ctx.build.member(w.userId, other.id, 'member');
    const res = await ctx.http.get('/v1/me').set('Authorization', bearer(w.token)).expect(200);
    expectSchema(res, MeSchema);
    expect(res.body).toMatchObject({ id: w.userId, name: 'Test User', webhook_url: null });
    expect(res.body.email).toMatch(/@example\.com$/);
    expect(res.body.organizations).toEqual(
      expect.arrayContaining([
        { organization_id: w.orgId, role: 'developer_admin' },
        { organization_id: other.id, role: 'member' },
      ]),
    );
  });

  it('is 401 for an API key', async () => {
    const res = await ctx.http.get('/v1/me').set('X-API-Key', w.key).expect(401);
    expect(res.body.error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'This endpoint requires a dashboard login token',
    });
  });

  it('is 401 without credentials', async () => {
    await ctx.http.get('/v1/me').expect(401);
  });
});

describe('PATCH /v1/me', () => {
  it('sets and clears the webhook URL, for a member as well', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    const token = ctx.build.token(member.id);
    const set = await ctx.http
      .patch('/v1/me')
      .set('Authorization', bearer(token))
      .send({ webhook_url: 'https://hooks.example.com/employees?team=1' })
      .expect(200);
    expect(set.body).toMatchObject({ id: member.id, webhook_url: 'https://hooks.example.com/employees?team=1' });
    expect((await userRow(member.id)).webhook_url).toBe('https://hooks.example.com/employees?team=1');
    const cleared = await ctx.http
      .patch('/v1/me')
      .set('Authorization', bearer(token))
      .send({ webhook_url: null })
      .expect(200);
    expect(cleared.body.webhook_url).toBeNull();
    expect((await userRow(member.id)).webhook_url).toBeNull();
  });

  it('changes the name and ignores unknown and read-only fields', async () => {
    const user = await ctx.build.user(w.orgId, 'member');
    const res = await ctx.http
      .patch('/v1/me')
      .set('Authorization', bearer(ctx.build.token(user.id)))
      .send({ name: '  Erika  ', email: 'evil@example.com', id: w.userId, favourite: 'x' })
      .expect(200);
    expect(res.body).toMatchObject({ id: user.id, name: 'Erika', email: user.email });
  });

  it('lists every problem and changes nothing', async () => {
    const user = await ctx.build.user(w.orgId, 'member');
    const before = await userRow(user.id);
    const res = await ctx.http
      .patch('/v1/me')
      .set('Authorization', bearer(ctx.build.token(user.id)))
      .send({ name: '', webhook_url: 'ftp://files.example.com/x' })
      .expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([
      expect.objectContaining({ field: 'name' }),
      { field: 'webhook_url', message: 'Only http and https URLs are allowed' },
    ]);
    expect(await userRow(user.id)).toEqual(before);
  });

  it.each([
    ['not a URL', 'not a url', 'Must be a valid URL'],
    ['credentials in the URL', 'https://user:pw@hooks.example.com/', 'Credentials in the URL are not allowed'],
    ['a number', 42, undefined],
  ])('rejects %s', async (_name, value, message) => {
    const res = await ctx.http
      .patch('/v1/me')
      .set('Authorization', bearer(w.token))
      .send({ webhook_url: value })
      .expect(400);
    expect(res.body.error.details[0].field).toBe('webhook_url');
    if (message) expect(res.body.error.details[0].message).toBe(message);
  });

  it('is 401 for an API key and changes nothing', async () => {
    const before = await userRow(w.userId);
    await ctx.http
      .patch('/v1/me')
      .set('X-API-Key', w.key)
      .send({ webhook_url: 'https://hooks.example.com/' })
      .expect(401);
    expect(await userRow(w.userId)).toEqual(before);
  });
});
