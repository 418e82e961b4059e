import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { isReadyForQuery, serverProcessId, socketOf } from '../../src/platform/pg.js';

/**
 * What src/platform/pg.ts reads of node-postgres's client (the silence watchdog's view of a
 * connection), against a real PostgreSQL, for a pooled connection and a pipelined one
 * (src/db/pipelined-reads.ts): a pg upgrade that moves any of it fails here by name.
 */
describe.each([false, true])("pg's client internals (pipeline: %s)", (pipeline) => {
  async function connected() {
    const client = new pg.Client({ connectionString: inject('adminUrl'), pipeline });
    await client.connect();
    return client;
  }

  it('tells whether a query waits for its answer, and hears the answer on its socket', async () => {
    const client = await connected();
    try {
      expect(isReadyForQuery(client)).toBe(true);
      let heard = 0;
      socketOf(client).on('data', () => (heard += 1));
      const answer = client.query('SELECT pg_sleep(0.1)');
      expect(isReadyForQuery(client)).toBe(false);
      await answer;
      expect(heard).toBeGreaterThan(0);
      expect(isReadyForQuery(client)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('names its server process as pg_stat_activity does', async () => {
    const client = await connected();
    try {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(serverProcessId(client)).toBe(rows[0]!.pid);
    } finally {
      await client.end();
    }
  });

  it('fails the waiting query with the error its socket is destroyed with, and ends', async () => {
    const client = await connected();
    client.on('error', () => {});
    const ended = new Promise((resolve) => client.once('end', resolve));
    const answer = client.query('SELECT pg_sleep(5)');
    socketOf(client).destroy(Object.assign(new Error('cut'), { code: 'ETIMEDOUT' }));
    await expect(answer).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await ended;
  });
});
