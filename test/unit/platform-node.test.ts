import { executionAsyncResource } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { http, stopAccepting } from '../../src/platform/node.js';

/** A server holding one idle keep-alive connection after one answered request. */
async function serverWithIdleConnection() {
  const server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<string>((resolve, reject) => {
      request({ host: '127.0.0.1', port, agent, path: '/' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += String(chunk)));
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
  expect(await get()).toBe('ok');
  const connections = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
  expect(await connections()).toBe(1);
  return { server, agent, get, connections };
}

/** What src/platform/node.ts relies on in Node: an upgrade that changes it fails here. */
describe("Node's HTTP server closing", () => {
  it('cuts idle keep-alive connections on server.close(), the reason the drain does not call it', async () => {
    const { server, agent, connections } = await serverWithIdleConnection();
    const closed = new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await connections()).toBe(0);
    await closed;
    agent.destroy();
  });

  it('keeps them open with stopAccepting, which calls back once the last one is gone', async () => {
    const { server, agent, get, connections } = await serverWithIdleConnection();
    let done = false;
    stopAccepting(server, () => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await connections()).toBe(1);
    // The idle connection still carries a request.
    expect(await get()).toBe('ok');
    expect(done).toBe(false);
    agent.destroy();
    await expect.poll(() => done).toBe(true);
  });
});

describe("Node's tick objects", () => {
  it("are their callback's async resource, the object keepTickObjectShape keeps", async () => {
    let callback = () => {};
    const resource = await new Promise<object>((resolve) => {
      callback = () => resolve(executionAsyncResource());
      process.nextTick(callback);
    });
    // The literal in Node's nextTick: the two async-id symbols first, then the callback and its arguments.
    expect(Object.getOwnPropertySymbols(resource).map((s) => s.description)).toEqual(
      expect.arrayContaining(['async_id_symbol', 'trigger_async_id_symbol']),
    );
    expect(resource).toMatchObject({ callback, args: undefined });
  });
});
