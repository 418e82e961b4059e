import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { createDb } from '../../src/db/knex.js';
import { isListening } from '../support/server-process.js';

/**
 * EMBEDDED_PG_PORT=0: the port is chosen right before PostgreSQL binds it, so another program can
 * take it in between. The start must then go on with another port, not fail.
 */

const tempDirs: string[] = [];
const holders: net.Server[] = [];

afterAll(async () => {
  for (const holder of holders) await new Promise((resolve) => holder.close(resolve));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A port some other program listens on, as one would that took the chosen port first. */
async function takenPort(): Promise<number> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
  holders.push(holder);
  return (holder.address() as net.AddressInfo).port;
}

/** A port nobody listens on right now. */
async function portFreeNow(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the embedded PostgreSQL on port 0', () => {
  it('starts on another port when the one chosen was taken before PostgreSQL bound it', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vam-pgport-'));
    chmodSync(dataDir, 0o755); // the postgres user (when run as root) must reach the cluster
    tempDirs.push(dataDir);
    const taken = await takenPort();
    const picked: number[] = [];
    const lines: { msg: string; port?: number }[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; port?: number }) },
    );

    const server = await startEmbeddedPostgres({
      dataDir,
      port: 0,
      logger,
      persistent: false,
      sharedDir: path.join(dataDir, 'shared'),
      // The first port handed out is one another program holds; the next ones are free.
      pickPort: async () => {
        const port = picked.length === 0 ? taken : await portFreeNow();
        picked.push(port);
        return port;
      },
    });
    try {
      const port = Number(new URL(server.url).port);
      expect(picked).toEqual([taken, port]);
      expect(lines.map((l) => l.msg)).toContain(
        'embedded PostgreSQL: the chosen port was taken meanwhile; trying another',
      );
      expect(lines.find((l) => l.msg.startsWith('embedded PostgreSQL listening'))?.port).toBe(port);
      const db = createDb(server.url, 1);
      expect((await db.raw('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await db.destroy();
    } finally {
      await server.stop();
    }
    expect(await isListening(Number(new URL(server.url).port))).toBe(false);
  }, 120_000);
});
