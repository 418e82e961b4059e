import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import {
  beforeKnexDestroy,
  emitKnexQuery,
  knexClient,
  knexConfigField,
  knexPoolCounts,
  queryOnConnection,
} from '../../src/platform/knex.js';

/**
 * What src/platform/knex.ts reads of knex's client (not in knex's documentation), against a real
 * PostgreSQL: a knex upgrade that moves any of it fails here by name (docs/contributing.md).
 * Only the server's own views are read, so the admin database serves without a clone.
 */
let db: Db;
beforeAll(() => {
  db = createDb(inject('adminUrl'), 2, undefined, { pipelineConnections: 0, silenceMs: 0 });
});
afterAll(() => db.destroy());

const backendPid = async (connection: { query(text: string): Promise<{ rows: { pid: number }[] }> }) =>
  (await connection.query('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

describe("knex's client internals", () => {
  it("carries our own config field, which a transaction's client shares", async () => {
    expect(knexConfigField(db, 'preparedStatements')).toBe(true);
    const other = createDb(inject('adminUrl'), 1, undefined, { preparedStatements: false, pipelineConnections: 0 });
    try {
      expect(knexConfigField(other, 'preparedStatements')).toBe(false);
    } finally {
      await other.destroy();
    }
    await db.transaction(async (trx) => {
      expect(knexConfigField(trx, 'preparedStatements')).toBe(true);
    });
  });

  it("hands out a pooled pg connection, and inside a transaction the transaction's own", async () => {
    const client = knexClient(db);
    const connection = await client.acquireConnection();
    try {
      expect(typeof (await backendPid(connection))).toBe('number');
    } finally {
      await client.releaseConnection(connection);
    }
    await db.transaction(async (trx) => {
      const trxPid = (await trx.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const own = await knexClient(trx).acquireConnection();
      expect(await backendPid(own)).toBe(trxPid);
      await knexClient(trx).releaseConnection(own);
      // Released inside the transaction, the connection is still the transaction's.
      expect(await backendPid(await knexClient(trx).acquireConnection())).toBe(trxPid);
    });
  });

  it("emits a query that db.on('query') listeners hear", () => {
    const heard: unknown[] = [];
    const listener = (query: unknown) => heard.push(query);
    db.on('query', listener);
    try {
      emitKnexQuery(db, { method: 'raw', sql: 'SELECT 1', bindings: [] });
    } finally {
      db.off('query', listener);
    }
    expect(heard).toEqual([{ method: 'raw', sql: 'SELECT 1', bindings: [] }]);
  });

  it('releases a connection before the promise of its release settles, so the release is not waited for', async () => {
    await db.raw('SELECT 1');
    const client = knexClient(db);
    const connection = await client.acquireConnection();
    expect(knexPoolCounts(db).used).toBe(1);
    void client.releaseConnection(connection);
    expect(knexPoolCounts(db).used).toBe(0);
  });

  it("runs a statement on the pool, or on the transaction's connection inside one", async () => {
    const pidOf = async (on: Db | Parameters<Parameters<Db['transaction']>[0]>[0]) =>
      (await queryOnConnection(on, { text: 'SELECT pg_backend_pid() AS pid, $1::int AS one', values: [1] }))
        .rows[0] as {
        pid: number;
        one: number;
      };
    expect((await pidOf(db)).one).toBe(1);
    await db.transaction(async (trx) => {
      const trxPid = (await trx.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      expect((await pidOf(trx)).pid).toBe(trxPid);
    });
    expect(knexPoolCounts(db).used).toBe(0);
  });

  it("counts the pool's connections for /metrics", async () => {
    await db.raw('SELECT 1');
    const client = knexClient(db);
    const connection = await client.acquireConnection();
    try {
      expect(knexPoolCounts(db)).toMatchObject({ used: 1, pending: 0, max: 2 });
    } finally {
      await client.releaseConnection(connection);
    }
    expect(knexPoolCounts(db)).toMatchObject({ used: 0, max: 2 });
    expect(knexPoolCounts(db).free).toBeGreaterThanOrEqual(1);
  });

  it('runs the hook before db.destroy() ends the pool', async () => {
    const other = createDb(inject('adminUrl'), 1, undefined, { pipelineConnections: 0 });
    await other.raw('SELECT 1');
    const seen: number[] = [];
    beforeKnexDestroy(other, async () => {
      seen.push(knexPoolCounts(other).max);
    });
    await other.destroy();
    expect(seen).toEqual([1]);
    await expect(other.raw('SELECT 1')).rejects.toThrow();
  });
});
