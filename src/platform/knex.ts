import type { Knex } from 'knex';
import type pg from 'pg';

/**
 * The fence around knex's client internals (knex 3, client `pg`): the one place that reads
 * `db.client`, which knex types as `any`. What is used here is not in knex's documentation; every
 * part of it is pinned by test/api/platform-knex.api.test.ts, so that a knex upgrade that moves it
 * fails a named test instead of misbehaving (docs/upgrading-libraries.md).
 *
 * The accessors are direct calls that allocate nothing: `runPrepared` uses them on the request path.
 */
/** The parts of knex's pool (tarn) that /metrics reads. */
type KnexPool = { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number };

export type KnexClient = {
  /** The config given to `knex(...)`, our own fields included; a transaction's client has its database's. */
  readonly config: Readonly<Record<string, unknown>>;
  /** A pooled connection, or inside a transaction the transaction's own connection. */
  acquireConnection(): Promise<pg.Client>;
  /** Gives the connection back to the pool (inside a transaction: nothing). */
  releaseConnection(connection: pg.Client): Promise<void>;
  /** knex's `query` event, as `db.on('query', ...)` hears it. */
  emit(event: 'query', query: object): void;
  /** tarn's pool, once the first connection was asked for. */
  readonly pool: KnexPool | undefined;
  /** What `db.destroy()` calls to end the pool. */
  destroy(callback?: unknown): Promise<void>;
};

/** `db`'s client (a transaction has a client of its own, made from its database's, with the same config). */
export function knexClient(db: Knex | Knex.Transaction): KnexClient {
  return db.client as KnexClient;
}

/** Emits knex's `query` event for a statement knex did not run itself, so `db.on('query')` listeners see it. */
export function emitKnexQuery(db: Knex | Knex.Transaction, query: object): void {
  knexClient(db).emit('query', query);
}

/**
 * `config` on a connection of `db`'s pool, or inside a transaction on the transaction's own
 * connection, handed to the driver directly. knex releases a connection synchronously (the promise
 * it returns is already settled), so the release is not waited for.
 */
export async function queryOnConnection(db: Knex | Knex.Transaction, config: pg.QueryConfig): Promise<pg.QueryResult> {
  const client = knexClient(db);
  const connection = await client.acquireConnection();
  try {
    return await connection.query(config);
  } finally {
    void client.releaseConnection(connection);
  }
}

/** A field of the config `db` was created with, such as one of our own beside knex's. */
export function knexConfigField(db: Knex | Knex.Transaction, name: string): unknown {
  return knexClient(db).config[name];
}

/** The pool's counts for /metrics (zeros before the first query made knex create the pool). */
export function knexPoolCounts(db: Knex): { used: number; free: number; pending: number; max: number } {
  const pool = knexClient(db).pool;
  return {
    used: pool?.numUsed() ?? 0,
    free: pool?.numFree() ?? 0,
    pending: pool?.numPendingAcquires() ?? 0,
    max: pool?.max ?? 0,
  };
}

/** Runs `first` whenever `db.destroy()` ends the pool, before the pool ends. */
export function beforeKnexDestroy(db: Knex, first: () => Promise<void>): void {
  const client = knexClient(db);
  const destroyPool = client.destroy.bind(client);
  client.destroy = async (callback?: unknown) => {
    await first();
    return destroyPool(callback);
  };
}
