import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { HealthSchema } from '../../src/modules/health/health.openapi.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('GET /v1/health', () => {
  it('answers without authentication and checks the database', async () => {
    const res = await ctx.http.get('/v1/health').expect(200);
    expectSchema(res, HealthSchema);
    expect(res.body).toMatchObject({ status: 'ok', version: '1.0.0', checks: { database: 'ok' } });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('serves the OpenAPI document without authentication', async () => {
    const res = await ctx.http.get('/v1/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/v1/agents', '/v1/agents/{agentId}', '/v1/api-keys']),
    );
  });
});
