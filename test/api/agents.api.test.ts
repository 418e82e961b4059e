import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { World } from '../support/builders.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

describe('GET /v1/agents', () => {
  it('lists the agents of the organization newest first with pagination', async () => {
    const org = await ctx.build.organization();
    const user = await ctx.build.user(org.id);
    const key = await ctx.build.apiKey(org.id, user.id);
    const first = await ctx.build.agent(org.id, { name: 'First' });
    await ctx
      .db('agents')
      .where({ id: first.id })
      .update({ created_at: new Date(Date.now() - 60_000) });
    const second = await ctx.build.agent(org.id, { name: 'Second' });
    const res = await ctx.http.get('/v1/agents').set('X-API-Key', key.key).expect(200);
    expectSchema(res, paginated(AgentSchema));
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([second.id, first.id]);
    expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    expect(res.body.data[0]).not.toHaveProperty('workflow');
  });

  it('returns only the allowed agents of a restricted key', async () => {
    const other = await ctx.build.agent(w.orgId, { name: 'Other' });
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [other.id] });
    const res = await ctx.http.get('/v1/agents').set('X-API-Key', key.key).expect(200);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([other.id]);
  });

  it('answers a page past the end with an empty list and the true totals', async () => {
    const res = await ctx.http.get('/v1/agents?page=99&limit=1').set('X-API-Key', w.key).expect(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.pagination.page).toBe(99);
    expect(res.body.pagination.pages).toBe(res.body.pagination.total);
  });

  it.each([
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=-1', 'limit'],
  ])('rejects %s with a 400 naming %s', async (query, field) => {
    const res = await ctx.http.get(`/v1/agents?${query}`).set('X-API-Key', w.key).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
  });

  it('accepts the bounds limit=1 and limit=100', async () => {
    await ctx.http.get('/v1/agents?limit=1').set('X-API-Key', w.key).expect(200);
    await ctx.http.get('/v1/agents?limit=100').set('X-API-Key', w.key).expect(200);
  });
});

describe('GET /v1/agents/{agentId}', () => {
  it('returns the full agent', async () => {
    const res = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body).toMatchObject({ id: w.agentId, organization_id: w.orgId, name: 'Main Agent', bundesland: 'DE' });
  });

  it('is 404 for an agent of another organization and for an unknown id', async () => {
    const other = await ctx.build.world();
    const a = await ctx.http.get(`/v1/agents/${other.agentId}`).set('X-API-Key', w.key).expect(404);
    expect(a.body.error.code).toBe('NOT_FOUND');
    await ctx.http.get('/v1/agents/00000000-0000-4000-8000-000000000000').set('X-API-Key', w.key).expect(404);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE for an agent outside the key scope', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    const res = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });

  it('is 403 FORBIDDEN naming the missing permission before looking the agent up', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    const res = await ctx.http
      .get('/v1/agents/00000000-0000-4000-8000-000000000000')
      .set('X-API-Key', key.key)
      .expect(403);
    expect(res.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'API key lacks required permission: agents:read',
    });
  });

  it('is 400 naming agentId when it is not a UUID', async () => {
    const res = await ctx.http.get('/v1/agents/not-a-uuid').set('X-API-Key', w.key).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });

  it('works with a dashboard token as well', async () => {
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('Authorization', `Bearer ${w.token}`).expect(200);
  });
});
