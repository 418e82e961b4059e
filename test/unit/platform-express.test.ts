import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { bornOnAppPrototypes } from '../../src/platform/express.js';
import { http } from '../../src/platform/node.js';

/** One GET through `server` (serving `app`) and what the handler saw of the request and response. */
async function oneRequest(server: Server, app: express.Express) {
  const seen: Record<string, boolean>[] = [];
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
    seen.push({
      request: Object.getPrototypeOf(req) === app.request,
      response: Object.getPrototypeOf(res) === app.response,
    }),
  );
  app.get('/x', (req, res) => {
    seen.push({
      request: Object.getPrototypeOf(req) === app.request,
      response: Object.getPrototypeOf(res) === app.response,
      node: req instanceof IncomingMessage && res instanceof ServerResponse,
    });
    res.json({ path: req.path, query: req.query });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/x?a=1`);
    return { status: res.status, body: (await res.json()) as unknown, seen };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** What src/platform/express.ts relies on in Express and Node: an upgrade that changes it fails here. */
describe('Express and Node building a request', () => {
  it("has Node's IncomingMessage and ServerResponse as plain constructor functions, callable on a new object", () => {
    for (const base of [http.IncomingMessage, http.ServerResponse]) {
      expect(Function.prototype.toString.call(base).startsWith('class')).toBe(false);
    }
    const req = Object.create(http.IncomingMessage.prototype) as IncomingMessage;
    expect(() => Reflect.apply(http.IncomingMessage, req, [null])).not.toThrow();
    expect(req.headers).toEqual({});
  });

  it("has the app's request and response prototypes lead to Node's", () => {
    const app = express();
    expect(app.request instanceof http.IncomingMessage).toBe(true);
    expect(app.response instanceof http.ServerResponse).toBe(true);
  });

  it("gives Node's own objects the app's prototypes when it takes them", async () => {
    const app = express();
    const answer = await oneRequest(http.createServer(app), app);
    expect(answer).toMatchObject({ status: 200, body: { path: '/x', query: { a: '1' } } });
    expect(answer.seen).toEqual([
      { request: false, response: false },
      { request: true, response: true, node: true },
    ]);
  });

  it("serves requests born on the app's prototypes, which it finds in place", async () => {
    const app = express();
    const answer = await oneRequest(http.createServer(bornOnAppPrototypes(app), app), app);
    expect(answer).toMatchObject({ status: 200, body: { path: '/x', query: { a: '1' } } });
    expect(answer.seen).toEqual([
      { request: true, response: true },
      { request: true, response: true, node: true },
    ]);
  });
});
