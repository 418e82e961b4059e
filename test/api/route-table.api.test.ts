import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { operationsOf, routeTableOf } from '../support/openapi.js';

let ctx: TestContext;
let document: OpenApiDocument;
beforeAll(async () => {
  ctx = await createTestContext();
  document = (await ctx.http.get('/v1/openapi.json').expect(200)).body;
});
afterAll(() => ctx.close());

describe('route table', () => {
  it('has exactly the operations of the OpenAPI document: no undocumented route, no documented route missing', () => {
    // The reference page, the metrics endpoint and the MCP endpoint (/mcp, JSON-RPC whose tools are
    // this document's operations) live outside /v1 and outside the contract.
    const routes = routeTableOf(ctx.app).filter(({ path }) => path.startsWith('/v1/'));
    const operations = operationsOf(document).map(({ method, path }) => ({ method, path }));
    expect(routes).toEqual(operations);
  });

  it('covers every module the container lists', () => {
    const mounted = ctx.container.modules.flatMap((m) => m.mounts.map((mount) => `/v1${mount.path}`));
    const documented = operationsOf(document).map((o) => o.path.replace(/\{(\w+)\}/g, ':$1'));
    for (const path of mounted) expect(documented.some((d) => d === path || d.startsWith(`${path}/`))).toBe(true);
  });
});
