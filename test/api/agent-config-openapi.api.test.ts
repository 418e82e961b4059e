import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

describe('OpenAPI document for agent configuration', () => {
  it('lists every agent configuration route with its methods', async () => {
    const { body } = await ctx.http.get('/v1/openapi.json').expect(200);
    const methods = (path: string) => Object.keys(body.paths[path] ?? {}).sort();
    expect(methods('/v1/agents')).toEqual(['get', 'post']);
    expect(methods('/v1/agents/{agentId}')).toEqual(['delete', 'get', 'patch']);
    expect(methods('/v1/agents/{agentId}/status')).toEqual(['get']);
    expect(methods('/v1/agents/{agentId}/greeting/preview')).toEqual(['post']);
    expect(methods('/v1/agents/{agentId}/workflow')).toEqual(['get', 'put']);
    expect(methods('/v1/organization/{orgId}')).toEqual(['get', 'patch']);
    expect(body.components.schemas).toHaveProperty('AgentPatch');
    expect(body.components.schemas).toHaveProperty('Workflow');
    expect(body.components.schemas).toHaveProperty('AgentStatus');
  });

  it('answers 405 with Allow for a wrong method on the new paths', async () => {
    const res = await ctx.http.put(`/v1/agents/${w.agentId}/status`).set('X-API-Key', w.key).expect(405);
    expect(res.headers.allow).toBe('GET');
    const organization = await ctx.http.delete(`/v1/organization/${w.orgId}`).set('X-API-Key', w.key).expect(405);
    expect(organization.headers.allow).toBe('GET, PATCH');
  });
});
