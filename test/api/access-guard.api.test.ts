import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { fillPath, operationsOf, type Operation } from '../support/openapi.js';

/**
 * Every operation the OpenAPI document lists, whatever module it comes from: a new route is checked
 * here the moment it is documented (and route-table.api.test.ts makes sure it is documented).
 */
let ctx: TestContext;
let w: World;
let operations: Operation[];
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const document: OpenApiDocument = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
  operations = operationsOf(document).filter((o) => !o.public);
});
afterAll(() => ctx.close());

function call(op: Operation, path: string) {
  const req = ctx.http[op.method](path);
  return op.method === 'get' || op.method === 'delete' ? req : req.send({});
}

/** The world's own ids where a path names them; any other id is one that exists nowhere. */
function ownPath(op: Operation): string {
  // Version numbers are integers; every other path parameter is an id.
  const versions = { version: '1', from: '1', to: '2' };
  return fillPath(op.path, { agentId: w.agentId, orgId: w.orgId, keyId: w.keyId, ...versions }, randomUUID());
}

describe('access to every documented operation', () => {
  it('has operations to check, and only health and the document itself are public', async () => {
    expect(operations.length).toBeGreaterThan(40);
    const document: OpenApiDocument = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
    const publicOps = operationsOf(document).filter((o) => o.public);
    expect(publicOps.map((o) => `${o.method} ${o.path}`)).toEqual(['get /v1/health', 'get /v1/openapi.json']);
  });

  it('refuses an API key without permissions: 401 where only the dashboard token is taken, else 403', async () => {
    const none = await ctx.build.apiKey(w.orgId, w.userId, {
      permissions: [],
      rateLimitPerMinute: 10_000,
      rateLimitPerHour: 1_000_000,
    });
    const rowsBefore = await ctx.db('agents').where({ organization_id: w.orgId }).count({ n: '*' }).first();
    for (const op of operations) {
      const res = await call(op, ownPath(op)).set('X-API-Key', none.key);
      const expected = op.tokenOnly ? { status: 401, code: 'UNAUTHORIZED' } : { status: 403, code: 'FORBIDDEN' };
      expect({ op: `${op.method} ${op.path}`, status: res.status, code: res.body.error?.code }).toEqual({
        op: `${op.method} ${op.path}`,
        ...expected,
      });
    }
    const rowsAfter = await ctx.db('agents').where({ organization_id: w.orgId }).count({ n: '*' }).first();
    expect(rowsAfter).toEqual(rowsBefore);
  });

  it("refuses a token of another organization on every operation that names this organization's agent, organization or key", async () => {
    const other = await ctx.build.world();
    const agentBefore = await ctx.db('agents').where({ id: w.agentId }).first();
    let checked = 0;
    for (const op of operations.filter((o) => /\{(agentId|orgId|keyId)\}/.test(o.path))) {
      const res = await call(op, ownPath(op)).set('Authorization', `Bearer ${other.token}`);
      const seen = { op: `${op.method} ${op.path}`, status: res.status };
      expect([403, 404].map((status) => ({ ...seen, status }))).toContainEqual(seen);
      if (op.path.includes('{agentId}')) expect(res.body.error.message).toBe('Agent not found');
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
    expect(await ctx.db('agents').where({ id: w.agentId }).first()).toEqual(agentBefore);
  });
});
