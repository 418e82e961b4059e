import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { checkedFetch } from '../support/contract.js';
import { createHttpServer, NODE_PLAIN_SERVER_FROM, RUNNING_NODE_MAJOR } from '../../src/http/http-server.js';

/** The file's server is the one main.ts runs (createHttpServer); these requests go to it over TCP. */
let ctx: TestContext;
let w: World;
/** fetch, each answer checked against the served OpenAPI document. */
let fetch: typeof globalThis.fetch;
beforeAll(async () => {
  ctx = await createTestContext();
  fetch = checkedFetch(ctx.contract);
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

/** What each request and response is built on when `server` hands it over, before Express sees it. */
function recordPrototypes(server: Server) {
  const seen: { request: boolean; response: boolean; node: boolean }[] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) =>
    seen.push({
      request: Object.getPrototypeOf(req) === ctx.app.request,
      response: Object.getPrototypeOf(res) === ctx.app.response,
      node: req instanceof IncomingMessage && res instanceof ServerResponse,
    });
  server.prependListener('request', listener);
  return { seen, stop: () => server.off('request', listener) };
}

/** One authenticated read through a server made for `nodeMajor`, recording what it handed over. */
async function handedOver(nodeMajor: number) {
  const server = createHttpServer(ctx.app, nodeMajor);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const record = recordPrototypes(server);
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/v1/agents/${w.agentId}`, { headers: { 'X-API-Key': w.key } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe(w.agentId);
  } finally {
    record.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return record.seen;
}

describe('the HTTP server', () => {
  it("before Node 24 builds requests and responses on the app's own prototypes, so Express has none to replace", async () => {
    expect(await handedOver(NODE_PLAIN_SERVER_FROM - 1)).toEqual([{ request: true, response: true, node: true }]);
  });

  it("from Node 24 hands Node's own objects to Express, which gives them its prototypes", async () => {
    expect(await handedOver(NODE_PLAIN_SERVER_FROM)).toEqual([{ request: false, response: false, node: true }]);
  });

  it('is the one of the running Node in main.ts and the tests', async () => {
    const record = recordPrototypes(ctx.server);
    try {
      await (await fetch(`${ctx.baseUrl}/v1/health`)).arrayBuffer();
    } finally {
      record.stop();
    }
    const builtOnApp = RUNNING_NODE_MAJOR < NODE_PLAIN_SERVER_FROM;
    expect(record.seen).toEqual([{ request: builtOnApp, response: builtOnApp, node: true }]);
  });

  it('serves the whole chain on them: key, rate limit, body, answers and errors in the envelope', async () => {
    const agent = await fetch(`${ctx.baseUrl}/v1/agents/${w.agentId}`, { headers: { 'X-API-Key': w.key } });
    expect(agent.status).toBe(200);
    expect(((await agent.json()) as { id: string }).id).toBe(w.agentId);
    expect(agent.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(agent.headers.get('x-ratelimit-limit')).toBe('10000');

    const created = await fetch(`${ctx.baseUrl}/v1/agents/${w.agentId}/contacts`, {
      method: 'POST',
      headers: { 'X-API-Key': w.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ customer_name: 'Over TCP', phone_number: '+4930999111' }),
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { customer_name: string }).customer_name).toBe('Over TCP');

    const invalid = await fetch(`${ctx.baseUrl}/v1/agents/${w.agentId}/contacts`, {
      method: 'POST',
      headers: { 'X-API-Key': w.key, 'Content-Type': 'application/json' },
      body: '{"customer_name":',
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');

    const missing = await fetch(`${ctx.baseUrl}/v1/nothing-here`, { headers: { 'X-API-Key': w.key } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });
});
