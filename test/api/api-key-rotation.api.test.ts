import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toolsFromDocument } from '../../src/modules/mcp/mcp-tools.js';
import { ApiKeySchema, CreatedApiKeySchema } from '../../src/modules/api-keys/api-key.schemas.js';
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
// Tests move the clock; each starts from the real time again.
afterEach(() => ctx.clock.set(new Date()));

const bearer = () => ({ Authorization: `Bearer ${w.token}` });

type Key = { id: string; key: string; expires_at: string | null; [field: string]: unknown };

async function createKey(fields: Record<string, unknown> = {}): Promise<Key> {
  const res = await ctx.http
    .post('/v1/api-keys')
    .set(bearer())
    .send({ name: 'Rotating', permissions: ['agents:read'], ...fields })
    .expect(201);
  return res.body;
}

const rotate = (id: string, body?: object) => {
  const req = ctx.http.post(`/v1/api-keys/${id}/rotate`).set(bearer());
  return body === undefined ? req : req.send(body);
};

const getAgent = (key: string) => ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key);
const keyCount = async () => Number((await ctx.db('api_keys').count({ n: '*' }).first())!.n);
const row = (id: string) => ctx.db('api_keys').where({ id }).first();

describe('POST /v1/api-keys/{keyId}/rotate', () => {
  it('answers 201 with a new key of the same settings, and the old one works until the overlap ends', async () => {
    const old = await createKey({
      name: 'Billing sync',
      permissions: ['agents:read', 'calls:read'],
      allowed_agent_ids: [w.agentId],
      allowed_ips: ['127.0.0.1', '::1'],
      rate_limit_per_minute: 30,
      rate_limit_per_hour: 500,
    });
    await getAgent(old.key).expect(200); // cached from here on
    const res = await rotate(old.id, { overlap_seconds: 600 }).expect(201);
    expectSchema(res, CreatedApiKeySchema);
    const fresh = res.body as Key;
    expect(fresh).toMatchObject({
      name: 'Billing sync',
      permissions: ['agents:read', 'calls:read'],
      allowed_agent_ids: [w.agentId],
      allowed_ips: ['127.0.0.1', '::1'],
      rate_limit_per_minute: 30,
      rate_limit_per_hour: 500,
      organization_id: w.orgId,
      created_by: w.userId,
      is_active: true,
      expires_at: null,
      last_used_at: null,
      rotated_from: old.id,
      rotated_to: null,
    });
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.key).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect(fresh.key).not.toBe(old.key);
    // The ETag is the new key's, as its GET shows it.
    const shown = await ctx.http.get(`/v1/api-keys/${fresh.id}`).set(bearer()).expect(200);
    expect(res.headers.etag).toBe(shown.headers.etag);
    expect(JSON.stringify(shown.body)).not.toContain(fresh.key);

    const before = await ctx.http.get(`/v1/api-keys/${old.id}`).set(bearer()).expect(200);
    expectSchema(before, ApiKeySchema);
    expect(before.body.rotated_to).toBe(fresh.id);
    expect(before.body.rotated_from).toBeNull();
    expect(new Date(before.body.expires_at).getTime()).toBe(ctx.clock.now().getTime() + 600_000);

    const list = await ctx.http.get('/v1/api-keys').set(bearer()).expect(200);
    const listed = (id: string) => list.body.data.find((k: { id: string }) => k.id === id);
    expect(listed(old.id)).toMatchObject({ rotated_from: null, rotated_to: fresh.id });
    expect(listed(fresh.id)).toMatchObject({ rotated_from: old.id, rotated_to: null });

    await getAgent(old.key).expect(200);
    await getAgent(fresh.key).expect(200);
    ctx.clock.advance(600_000);
    const expired = await getAgent(old.key).expect(401);
    expect(expired.body.error.message).toBe('API key has expired');
    await getAgent(fresh.key).expect(200);
  });

  it('with overlap_seconds 0 refuses the old key on the very next request', async () => {
    const old = await createKey();
    await getAgent(old.key).expect(200);
    const { body: fresh } = await rotate(old.id, { overlap_seconds: 0 }).expect(201);
    expect((await getAgent(old.key).expect(401)).body.error.message).toBe('API key has expired');
    await getAgent(fresh.key).expect(200);
  });

  it('takes an overlap of one hour without a body, and never extends an earlier expiry', async () => {
    const plain = await createKey();
    await rotate(plain.id).expect(201);
    expect((await row(plain.id)).expires_at.getTime()).toBe(ctx.clock.now().getTime() + 3_600_000);

    const soon = new Date(ctx.clock.now().getTime() + 60_000);
    const short = await createKey({ expires_at: soon.toISOString() });
    await rotate(short.id, { overlap_seconds: 604_800 }).expect(201);
    expect((await row(short.id)).expires_at.getTime()).toBe(soon.getTime());
  });

  it('lets both keys spend from one rate-limit budget during the overlap', async () => {
    const hour = new Date(Date.now() + 3_600_000);
    hour.setUTCMinutes(0, 0, 0);
    ctx.clock.set(hour);
    const old = await createKey({ rate_limit_per_minute: 3 });
    await getAgent(old.key).expect(200);
    await getAgent(old.key).expect(200);
    const { body: fresh } = await rotate(old.id).expect(201);
    const last = await getAgent(fresh.key).expect(200);
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    expect((await getAgent(fresh.key).expect(429)).body.error.code).toBe('RATE_LIMITED');
    await getAgent(old.key).expect(429);
    // A rotation of the new key stays in the same budget (the chain's first key).
    const { body: third } = await rotate(fresh.id).expect(201);
    await getAgent(third.key).expect(429);
    ctx.clock.advance(60_000);
    await getAgent(third.key).expect(200);
  });

  it('refuses a key already rotated, inactive or expired with 409 and writes nothing', async () => {
    const rotated = await createKey();
    const { body: fresh } = await rotate(rotated.id).expect(201);
    const inactive = await createKey({ is_active: false });
    const expiring = await createKey({ expires_at: new Date(ctx.clock.now().getTime() + 1000).toISOString() });
    ctx.clock.advance(1000);
    const count = await keyCount();
    const cases: [string, string][] = [
      [rotated.id, `API key was already rotated; rotate its replacement ${fresh.id}`],
      [inactive.id, 'API key is inactive; activate it or create a new key'],
      [expiring.id, 'API key has expired; create a new key'],
    ];
    for (const [id, message] of cases) {
      const before = await row(id);
      const res = await rotate(id).expect(409);
      expect(res.body.error).toMatchObject({ code: 'CONFLICT', message });
      expect(await row(id)).toEqual(before);
    }
    expect(await keyCount()).toBe(count);
  });

  it("refuses to extend or remove a rotated key's expiry with 409, and lets it be brought forward", async () => {
    const old = await createKey();
    const { body: fresh } = await rotate(old.id, { overlap_seconds: 600 }).expect(201);
    const before = await row(old.id);
    const patch = (body: object) => ctx.http.patch(`/v1/api-keys/${old.id}`).set(bearer()).send(body);
    for (const expires_at of [null, new Date(ctx.clock.now().getTime() + 601_000).toISOString()]) {
      const res = await patch({ expires_at }).expect(409);
      expect(res.body.error).toMatchObject({
        code: 'CONFLICT',
        message: `API key was rotated to ${fresh.id}: its expiry can be brought forward, not extended or removed`,
      });
      expect(await row(old.id)).toEqual(before);
    }
    // Once the overlap has ended, removing the expiry must not revive the old key.
    ctx.clock.advance(601_000);
    await patch({ expires_at: null }).expect(409);
    expect((await getAgent(old.key).expect(401)).body.error.message).toBe('API key has expired');
    ctx.clock.set(new Date(before.expires_at.getTime() - 600_000));
    const earlier = new Date(before.expires_at.getTime() - 300_000);
    await patch({ expires_at: earlier.toISOString(), name: 'Old' }).expect(200);
    expect((await row(old.id)).expires_at.getTime()).toBe(earlier.getTime());
    // Its replacement is an ordinary key.
    await ctx.http.patch(`/v1/api-keys/${fresh.id}`).set(bearer()).send({ expires_at: null }).expect(200);
  });

  it('rotates a key again once its replacement is deleted', async () => {
    const old = await createKey();
    const { body: first } = await rotate(old.id).expect(201);
    await ctx.http.delete(`/v1/api-keys/${first.id}`).set(bearer()).expect(204);
    expect((await row(old.id)).rotated_to).toBeNull();
    const { body: second } = await rotate(old.id).expect(201);
    expect((await row(old.id)).rotated_to).toBe(second.id);
  });

  it('refuses a bad overlap or an unknown field with 400 naming it, and writes nothing', async () => {
    const key = await createKey();
    const count = await keyCount();
    for (const [body, field] of [
      [{ overlap_seconds: -1 }, 'overlap_seconds'],
      [{ overlap_seconds: 604_801 }, 'overlap_seconds'],
      [{ overlap_seconds: 1.5 }, 'overlap_seconds'],
      [{ overlap_seconds: '60' }, 'overlap_seconds'],
      [{ name: 'x' }, 'name'],
    ] as const) {
      const res = await rotate(key.id, body).expect(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    }
    expect(await keyCount()).toBe(count);
    expect((await row(key.id)).expires_at).toBeNull();
    await rotate(key.id, { overlap_seconds: 604_800 }).expect(201);
  });

  it('is 404 for a missing key or one of another organization, 401 with an API key and 403 for a member', async () => {
    const other = await ctx.build.world();
    const count = await keyCount();
    await rotate('00000000-0000-4000-8000-000000000000').expect(404);
    expect((await rotate(other.keyId).expect(404)).body.error.code).toBe('NOT_FOUND');
    await ctx.http.post(`/v1/api-keys/${w.keyId}/rotate`).set('X-API-Key', w.key).expect(401);
    const member = await ctx.build.user(w.orgId, 'member');
    const forbidden = await ctx.http
      .post(`/v1/api-keys/${w.keyId}/rotate`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .expect(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
    expect(await keyCount()).toBe(count);
    expect((await row(other.keyId)).rotated_to).toBeNull();
  });

  it("checks If-Match against the old key's ETag", async () => {
    const key = await createKey();
    const { headers } = await ctx.http.get(`/v1/api-keys/${key.id}`).set(bearer()).expect(200);
    const stale = await rotate(key.id).set('If-Match', '"stale"').expect(412);
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
    expect((await row(key.id)).rotated_to).toBeNull();
    await rotate(key.id).set('If-Match', headers.etag).expect(201);
  });

  it('is recorded in the audit log and is not offered as an MCP tool', async () => {
    const key = await createKey();
    await rotate(key.id).expect(201);
    const entry = await ctx.db('audit_log').where({ resource_id: key.id, action: 'api-keys.rotate' }).first();
    expect(entry).toBeDefined();
    expect(JSON.stringify(entry)).not.toContain('svc_live_');
    expect(toolsFromDocument(ctx.openapi).map((t) => t.name)).not.toContain('rotateApiKey');
  });
});
