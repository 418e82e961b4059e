import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';

// COUNT(*) and other int8 values fit in a JS number here; return them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = Knex;

const here = path.dirname(fileURLToPath(import.meta.url));
// Run from source (tsx: src/db/knex.ts, migrations/*.ts) or compiled (`npm run build`: dist/db/knex.js,
// dist/migrations/*.js).
const compiled = !import.meta.url.endsWith('.ts');

export const migrationConfig: Knex.MigratorConfig = {
  directory: compiled ? path.resolve(here, '../migrations') : path.resolve(here, '../../migrations'),
  loadExtensions: compiled ? ['.js'] : ['.ts'],
  tableName: 'knex_migrations',
};

export function createDb(url: string, poolMax = 10, logger?: Logger): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
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
  });
}

/** Runs `work` in a transaction; use it when several writes belong together. */
export function inTransaction<T>(db: Db, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(work);
}
