import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { z } from '../../src/openapi/zod.js';
import { ApiKeyListItemSchema, CreatedApiKeySchema } from '../../src/modules/api-keys/api-key.schemas.js';

// What TalkPilot's key-management clients read from the list, and the 403 text they match.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

describe('TalkPilot API key list fields', () => {
  it('shows organization_name, created_by_email and is_own on every key', async () => {
    const colleague = await ctx.build.user(w.orgId, 'developer_admin');
    const theirs = await ctx.build.apiKey(w.orgId, colleague.id);
    const mine = await ctx.http
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ name: 'CRM-Sync', permissions: ['agents:read'] })
      .expect(201);
    expectSchema(mine, CreatedApiKeySchema);
    const [org] = await ctx.db('organizations').where({ id: w.orgId }).select('name');
    const [me] = await ctx.db('users').where({ id: w.userId }).select('email');

    const res = await ctx.http.get('/v1/api-keys').set('Authorization', `Bearer ${w.token}`).expect(200);
    expectSchema(res, z.object({ data: z.array(ApiKeyListItemSchema) }));
    const byId = new Map(res.body.data.map((k: { id: string }) => [k.id, k]));
    expect(byId.get(mine.body.id)).toMatchObject({
      organization_name: org.name,
      created_by_email: me.email,
      is_own: true,
    });
    expect(byId.get(theirs.id)).toMatchObject({
      organization_name: org.name,
      created_by_email: colleague.email,
      is_own: false,
    });
    for (const key of res.body.data) expect(key).not.toHaveProperty('key_hash');
  });
});

describe('TalkPilot 403 text', () => {
  it('says "API key lacks required permission: x"', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const res = await ctx.http.get(`/v1/agents/${w.agentId}/calls`).set('X-API-Key', key.key).expect(403);
    expect(res.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'API key lacks required permission: calls:read',
    });
  });
});
