import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { WebhookSecretSchema } from '../../src/modules/webhooks/webhook.openapi.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const DAY_MS = 24 * 60 * 60 * 1000;
const read = (orgId: string, token: string) =>
  ctx.http.get(`/v1/organization/${orgId}/webhook-secret`).set('Authorization', `Bearer ${token}`);
const rotate = (orgId: string, token: string) =>
  ctx.http.post(`/v1/organization/${orgId}/webhook-secret/rotate`).set('Authorization', `Bearer ${token}`);
const stored = (orgId: string) => ctx.db('organization_webhook_secrets').where({ organization_id: orgId }).first();

describe('GET /v1/organization/{orgId}/webhook-secret', () => {
  it('creates the secret on first read and returns the same one afterwards', async () => {
    const world = await ctx.build.world();
    const first = await read(world.orgId, world.token).expect(200);
    expectSchema(first, WebhookSecretSchema);
    expect(first.body).toEqual({
      organization_id: world.orgId,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previous_secret_expires_at: null,
      rotated_at: null,
      created_at: expect.any(String),
    });
    expect((await read(world.orgId, world.token).expect(200)).body.secret).toBe(first.body.secret);
  });

  it('gives each organization its own secret', async () => {
    const other = await ctx.build.world();
    expect((await read(other.orgId, other.token)).body.secret).not.toBe((await read(w.orgId, w.token)).body.secret);
  });

  it('is 401 for an API key, even one with every permission', async () => {
    const res = await ctx.http.get(`/v1/organization/${w.orgId}/webhook-secret`).set('X-API-Key', w.key).expect(401);
    expect(res.body.error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'This endpoint requires a dashboard login token',
    });
  });

  it.each(['admin', 'member'] as const)('is 403 for an %s of the organization', async (role) => {
    const user = await ctx.build.user(w.orgId, role);
    const res = await read(w.orgId, ctx.build.token(user.id)).expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  it('is 404 for an organization the user does not belong to', async () => {
    const other = await ctx.build.world();
    expect((await read(other.orgId, w.token).expect(404)).body.error.code).toBe('NOT_FOUND');
    expect(await stored(other.orgId)).toBeUndefined();
  });

  it('is 400 naming orgId when it is not a UUID', async () => {
    const res = await read('abc', w.token).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'orgId', message: 'Must be a UUID' }]);
  });
});

describe('POST /v1/organization/{orgId}/webhook-secret/rotate', () => {
  it('replaces the secret and keeps the old one signing for 24 hours', async () => {
    const world = await ctx.build.world();
    const before = (await read(world.orgId, world.token)).body.secret;
    const res = await rotate(world.orgId, world.token).expect(200);
    const now = ctx.clock.now();
    expect(res.body.secret).toMatch(/^whsec_/);
    expect(res.body.secret).not.toBe(before);
    expect(res.body.rotated_at).toBe(now.toISOString());
    expect(res.body.previous_secret_expires_at).toBe(new Date(now.getTime() + DAY_MS).toISOString());
    expect((await read(world.orgId, world.token)).body.secret).toBe(res.body.secret);
    expect(await stored(world.orgId)).toMatchObject({ secret: res.body.secret, previous_secret: before });

    const start = ctx.clock.now();
    ctx.clock.advance(DAY_MS);
    try {
      expect((await read(world.orgId, world.token)).body.previous_secret_expires_at).toBeNull();
    } finally {
      ctx.clock.set(start);
    }
  });

  it('keeps only the latest previous secret when rotated twice', async () => {
    const world = await ctx.build.world();
    const first = (await read(world.orgId, world.token)).body.secret;
    const second = (await rotate(world.orgId, world.token)).body.secret;
    const third = (await rotate(world.orgId, world.token)).body.secret;
    expect(await stored(world.orgId)).toMatchObject({ secret: third, previous_secret: second });
    expect([second, third]).not.toContain(first);
  });

  it('rotates an organization whose secret was never read', async () => {
    const world = await ctx.build.world();
    const res = await rotate(world.orgId, world.token).expect(200);
    expect(await stored(world.orgId)).toMatchObject({ secret: res.body.secret });
  });

  it('is 401 for an API key and leaves the secret unchanged', async () => {
    await read(w.orgId, w.token);
    const before = await stored(w.orgId);
    await ctx.http.post(`/v1/organization/${w.orgId}/webhook-secret/rotate`).set('X-API-Key', w.key).expect(401);
    expect(await stored(w.orgId)).toEqual(before);
  });

  it('is 403 for an admin and leaves the secret unchanged', async () => {
    await read(w.orgId, w.token);
    const before = await stored(w.orgId);
    const admin = await ctx.build.user(w.orgId, 'admin');
    expect((await rotate(w.orgId, ctx.build.token(admin.id)).expect(403)).body.error.code).toBe('FORBIDDEN');
    expect(await stored(w.orgId)).toEqual(before);
  });

  it('is 404 for another organization and leaves its secret unchanged', async () => {
    const other = await ctx.build.world();
    await read(other.orgId, other.token);
    const before = await stored(other.orgId);
    await rotate(other.orgId, w.token).expect(404);
    expect(await stored(other.orgId)).toEqual(before);
  });

  it('is 405 for GET', async () => {
    await ctx.http
      .get(`/v1/organization/${w.orgId}/webhook-secret/rotate`)
      .set('Authorization', `Bearer ${w.token}`)
      .expect(405);
  });
});
