import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { DATABASE_PIPELINE_CONNECTIONS_DEFAULT, DATABASE_TIMEOUT_DEFAULTS } from '../config.js';
import { beforeKnexDestroy } from '../platform/knex.js';
import { isRetryableConflict } from './pg-errors.js';
import { PipelinedReads } from './pipelined-reads.js';
import { usePipelinedReads } from './prepared.js';
import { SilenceWatchdog } from './silence-watchdog.js';

// COUNT(*) and other int8 values fit in a JS number here; return them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = Knex;

const here = path.dirname(fileURLToPath(import.meta.url));
// Run from source (tsx: src/db/knex.ts, migrations/*.ts) or compiled (`npm run build`: dist/db/knex.js,
// dist/migrations/*.js).
const compiled = !import.meta.url.endsWith('.ts');

/** Where the migrations are: `migrations/*.ts` beside the sources, or `dist/migrations/*.js` compiled. */
export const migrationsDirectory = compiled
  ? path.resolve(here, '../migrations')
  : path.resolve(here, '../../migrations');
const migrationExtension = compiled ? '.js' : '.ts';

/**
 * Records every migration under its source name (`<timestamp>_<name>.ts`), whether it runs from the
 * sources (tsx) or compiled (`.js` in dist/): a database migrated by `npm start` can then be started
 * by `npm run start:prod` or the image, and the other way round. (knex's own file source records the
 * file name as found, so a compiled run would see every `.ts` entry as missing and refuse to start.)
 */
class SourceNamedMigrations implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    const files = await readdir(migrationsDirectory);
    return files.filter((file) => file.endsWith(migrationExtension) && !file.endsWith('.d.ts')).sort();
  }

  getMigrationName(file: string): string {
    return `${file.slice(0, -migrationExtension.length)}.ts`;
  }

  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(path.join(migrationsDirectory, file)).href)) as Knex.Migration;
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new SourceNamedMigrations(),
  tableName: 'knex_migrations',
};

export type DbOptions = {
  /**
   * false runs the few hot queries that are otherwise named prepared statements (src/db/prepared.ts)
   * unnamed, for a pooler that cannot carry prepared statements between transactions.
   */
  preparedStatements?: boolean;
  /** DATABASE_CONNECT_TIMEOUT_MS */
  connectTimeoutMs?: number;
  /** DATABASE_ACQUIRE_TIMEOUT_MS */
  acquireTimeoutMs?: number;
  /** DATABASE_SILENCE_MS (0: off) */
  silenceMs?: number;
  /** DATABASE_PIPELINE_CONNECTIONS (0: the pipelined reads take pool connections like any query) */
  pipelineConnections?: number;
};

/** The first line of a knex log message (its first argument may carry a stack). */
function firstLine(message: unknown): unknown {
  return typeof message === 'string' ? message.split('\n')[0] : message;
}

/**
 * pg connection settings for a pool that must not hang on a silent database: the handshake is
 * bounded, and TCP keepalive finds idle connections whose peer vanished.
 */
export function connectionSettings(url: string, connectTimeoutMs: number) {
  return {
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export function createDb(url: string, poolMax = 10, logger?: Logger, options: DbOptions = {}): Db {
  const connectTimeoutMs = options.connectTimeoutMs ?? DATABASE_TIMEOUT_DEFAULTS.connectTimeoutMs;
  // Cuts a pooled connection whose query went unanswered (src/db/silence-watchdog.ts); knex then
  // sees it disposed and drops it instead of handing it out again.
  const watchdog = new SilenceWatchdog({
    url,
    silenceMs: options.silenceMs ?? DATABASE_TIMEOUT_DEFAULTS.silenceMs,
    ...(logger ? { logger } : {}),
  });
  const config: Knex.Config & { preparedStatements: boolean } = {
    client: 'pg',
    // Read back by runPrepared through the client's config, which a transaction shares.
    preparedStatements: options.preparedStatements ?? true,
    // A silent database costs a request at most about 5 s, answered 503: a connection attempt fails
    // after connectTimeoutMs, a wait for a pool slot after acquireTimeoutMs, and a query that gets no
    // answer is cut by the watchdog.
    connection: connectionSettings(url, connectTimeoutMs),
    acquireConnectionTimeout: options.acquireTimeoutMs ?? DATABASE_TIMEOUT_DEFAULTS.acquireTimeoutMs,
    pool: {
      min: 0,
      max: poolMax,
      afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
        watchdog.watch(connection);
        // No JIT compilation: every statement here is short, and over monthly partitions a plan whose
        // estimated cost passes jit_above_cost compiled hundreds of functions for about a second (an
        // erasure batch among a million calls: 950 ms of 1,450; `npm run bench -- erasure`). Behind a
        // transaction-mode pooler a session setting would land on whichever server connection ran
        // it, so there the database's own setting counts (docs/scaling.md).
        if (options.preparedStatements === false) return done(null, connection);
        connection.query('SET jit = off').then(
          () => done(null, connection),
          (error: Error) => done(error, connection),
        );
      },
    },
    migrations: migrationConfig,
    // knex's own warnings go to our structured log, not to the console.
    ...(logger
      ? {
          log: {
            // knex hands over messages with the error's stack appended: the log keeps the first line.
            warn: (m: unknown) => logger.warn({ knex: firstLine(m) }),
            error: (m: unknown) => logger.error({ knex: firstLine(m) }),
            deprecate: (m: unknown) => logger.warn({ knex: m }),
            debug: (m: unknown) => logger.debug({ knex: m }),
          },
        }
      : {}),
  };
  const db = knexFactory(config);
  const pipelineConnections = options.pipelineConnections ?? DATABASE_PIPELINE_CONNECTIONS_DEFAULT;
  // Not behind a pooler without prepared statements: its connections are not this server's own.
  if (pipelineConnections > 0 && config.preparedStatements) {
    const reads = new PipelinedReads(connectionSettings(url, connectTimeoutMs), pipelineConnections, (connection) =>
      watchdog.watch(connection),
    );
    usePipelinedReads(db, reads);
    // The pipelined connections end with the pool.
    beforeKnexDestroy(db, () => reads.close());
  }
  return db;
}

/** Carries a dry run's result out of the transaction it rolls back. */
class DryRunRollback extends Error {
  constructor(readonly result: unknown) {
    super('dry run');
  }
}

/**
 * Runs `work` in a transaction; use it when several writes belong together. A transaction that
 * loses a race (serialization failure 40001, deadlock 40P01) is run once more from the start; a
 * second loss reaches the error handler, which answers 409 CONFLICT. `work` must therefore have no
 * effect outside the transaction before it commits.
 *
 * `dryRun` runs the whole of `work` (every check, every write, the version and the event it
 * records) and then rolls it back, returning what `work` returned: nothing is stored or sent,
 * because events are only sent once their transaction commits.
 */
export async function inTransaction<T>(
  db: Db,
  work: (trx: Knex.Transaction) => Promise<T>,
  options: { dryRun?: boolean } = {},
): Promise<T> {
  const run = options.dryRun
    ? async (trx: Knex.Transaction): Promise<T> => {
        throw new DryRunRollback(await work(trx));
      }
    : work;
  const attempt = async (): Promise<T> => {
    try {
      return await db.transaction(run);
    } catch (error) {
      if (error instanceof DryRunRollback) return error.result as T;
      throw error;
    }
  };
  try {
    return await attempt();
  } catch (error) {
    if (!isRetryableConflict(error)) throw error;
    return attempt();
  }
}
