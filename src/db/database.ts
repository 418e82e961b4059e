import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { startEmbeddedPostgres } from './embedded.js';
import { createDb, type Db } from './knex.js';

export type Database = {
  db: Db;
  url: string;
  embedded: boolean;
  /** The database answered (migrations ran): knex's warnings are logged from now on. */
  answered: () => void;
  close: () => Promise<void>;
};

/** DATABASE_URL when set, otherwise the embedded PostgreSQL under DATA_DIR. */
export async function openDatabase(config: Config, logger: Logger): Promise<Database> {
  let url = config.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!url) {
    const server = await startEmbeddedPostgres({
      dataDir: config.DATA_DIR,
      port: config.EMBEDDED_PG_PORT,
      sharedDir: config.EMBEDDED_PG_SHARED_DIR,
      logger,
    });
    url = server.url;
    stopEmbedded = server.stop;
  }
  // Until the database has answered once, knex's warnings ("Acquire connection error") only repeat
  // the failure the start ends with, in one line naming its cause and fix (src/setup-error.ts).
  const dbLogger = logger.child({});
  dbLogger.level = 'error';
  const db = createDb(url, config.DATABASE_POOL_MAX, dbLogger, {
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
    silenceMs: config.DATABASE_SILENCE_MS,
    pipelineConnections: config.DATABASE_PIPELINE_CONNECTIONS,
  });
  return {
    db,
    url,
    embedded: !config.DATABASE_URL,
    answered: () => {
      dbLogger.level = logger.level;
    },
    close: async () => {
      await db.destroy();
      await stopEmbedded();
    },
  };
}
