import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { register } from 'tsx/esm/api';
import type { TestProject } from 'vitest/node';
import { startThrowawayEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrationConfig } from '../../src/db/knex.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { createAdminDb, databaseUrl } from './database-url.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDatabase: string;
  }
}

/**
 * One PostgreSQL for the run (DATABASE_URL, or an embedded one in .data/test-*, removed at the end;
 * as root in a private directory it lives where the server's would), one migrated
 * template database; each test file clones the template into a database of its own.
 */
export default async function setup(project: TestProject) {
  const logger = pino({ level: 'silent' });
  let adminUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!adminUrl) {
    const server = await startThrowawayEmbeddedPostgres({ prefix: 'test', port: 0, logger });
    adminUrl = server.url;
    stopEmbedded = server.stop;
  }
  const runId = randomBytes(4).toString('hex');
  const template = `vam_tpl_${runId}`;
  const admin = createAdminDb(adminUrl, 2);
  try {
    // knex imports the .ts migrations itself; this process has no TypeScript loader of its own.
    const unregister = register();
    await admin.raw(`CREATE DATABASE "${template}"`);
    const templateDb = createAdminDb(databaseUrl(adminUrl, template), 2);
    await templateDb.migrate.latest(migrationConfig);
    await templateDb.destroy();
    await JobQueue.install(databaseUrl(adminUrl, template), logger);
    await unregister();
  } catch (error) {
    await admin.destroy();
    await stopEmbedded();
    throw error;
  }

  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    const rows: { datname: string }[] = (
      await admin.raw(`SELECT datname FROM pg_database WHERE datname LIKE ?`, [`vam_t_${runId}_%`])
    ).rows;
    for (const { datname } of rows) await admin.raw(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.raw(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await admin.destroy();
    await stopEmbedded();
  };
}
