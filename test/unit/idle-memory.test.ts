import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IDLE_MS, IdleMemoryTrim } from '../../src/ops/idle-memory.js';

let server: Server;
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function listening(): Promise<string> {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('IdleMemoryTrim', () => {
  it('collects once after the start, then once per idle spell of IDLE_MS without a request', async () => {
    const url = await listening();
    const collections: unknown[] = [];
    const trim = new IdleMemoryTrim(server, pino({ level: 'silent' }), (options?: unknown) => {
      collections.push(options);
    });
    trim.start();
    try {
      const t0 = 1_000_000;
      expect(trim.check(t0)).toBe(true); // nothing served yet: the start's garbage
      expect(collections).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
      expect(trim.check(t0 + 1)).toBe(false); // once per spell

      await fetch(url);
      expect(trim.check(t0 + 5_000)).toBe(false); // a request since the last check: busy
      expect(trim.check(t0 + 5_000 + IDLE_MS - 1)).toBe(false); // not idle long enough
      expect(trim.check(t0 + 5_000 + IDLE_MS)).toBe(true);
      expect(trim.check(t0 + 5_000 + 2 * IDLE_MS)).toBe(false);
      expect(collections).toHaveLength(2);

      await fetch(url);
      expect(trim.check(t0 + 100_000)).toBe(false);
      expect(trim.check(t0 + 100_000 + IDLE_MS)).toBe(true);
      expect(collections).toHaveLength(3);
    } finally {
      trim.stop();
    }
  });

  it('does nothing without a collector (Node started without --expose-gc)', async () => {
    await listening();
    const trim = new IdleMemoryTrim(server, pino({ level: 'silent' }), undefined);
    trim.start();
    expect(server.listenerCount('request')).toBe(1); // only the server's own handler
    expect(trim.check(Number.MAX_SAFE_INTEGER)).toBe(false);
    trim.stop();
  });
});
