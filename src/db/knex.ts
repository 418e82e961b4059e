import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { isRetryableConflict } from './pg-errors.js';

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

/**
 * `preparedStatements: false` runs the few hot queries that are otherwise named prepared statements
 * (src/db/prepared.ts) unnamed, for a pooler that cannot carry prepared statements between transactions.
 */
export function createDb(
  url: string,
  poolMax = 10,
  logger?: Logger,
  options: { preparedStatements?: boolean } = {},
): Db {
  const config: Knex.Config & { preparedStatements: boolean } = {
    client: 'pg',
    // Read back by runPrepared through the client's config, which a transaction shares.
    preparedStatements: options.preparedStatements ?? true,
    // A connection attempt that gets no answer (a network cut, not a refusal) fails after 5 s, and a
    // request waits at most 10 s for a pool slot; both end as 503 instead of hanging.
    connection: { connectionString: url, connectionTimeoutMillis: 5000, keepAlive: true },
    acquireConnectionTimeout: 10_000,
    pool: { min: 0, max: poolMax },
    migrations: migrationConfig,
    // knex's own warnings go to our structured log, not to the console.
    ...(logger
      ? {
          log: {
            warn: (m: unknown) => logger.warn({ knex: m }),
            error: (m: unknown) => logger.error({ knex: m }),
            deprecate: (m: unknown) => logger.warn({ knex: m }),
            debug: (m: unknown) => logger.debug({ knex: m }),
          },
        }
      : {}),
  };
  return knexFactory(config);
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
