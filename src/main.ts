import type { Server } from 'node:http';
import { createApp } from './app.js';
import { createTokenVerifier } from './auth/token.js';
import { systemClock } from './clock.js';
import { parseConfig, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrationConfig } from './db/knex.js';
import { MemoryRateLimitStore, RedisRateLimitStore, type RateLimitStore } from './http/rate-limit-store.js';
import { JobQueue } from './jobs/queue.js';
import { createLogger } from './logger.js';
import { bootstrap } from './ops/bootstrap.js';
import { OpsRepository } from './ops/ops.repository.js';
import { withJwtSecret } from './ops/dev-secret.js';

/** A fresh embedded database gets a demo organization, with a token and a key ready for curl. */
async function printDemoOnFirstStart(database: Database, config: Config): Promise<void> {
  if ((await new OpsRepository(database.db).countOrganizations()) > 0) return;
  const demo = await bootstrap(database.db, config);
  const base = `http://localhost:${config.PORT}`;
  process.stdout.write(
    [
      '',
      'First start: a demo organization was created.',
      JSON.stringify(demo, null, 2),
      '',
      'Try it:',
      `  curl -H 'X-API-Key: ${demo.api_key}' ${base}/v1/agents`,
      `  curl -H 'Authorization: Bearer ${demo.dashboard_token}' ${base}/v1/api-keys`,
      '',
    ].join('\n'),
  );
}

/** parseConfig -> open database -> migrate -> createApp -> listen; SIGTERM drains, then closes the pool. */
async function main(): Promise<void> {
  const config = withJwtSecret(parseConfig(process.env));
  const logger = createLogger(config);
  const database = await openDatabase(config, logger);
  const [, applied] = await database.db.migrate.latest(migrationConfig);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');

  const rateLimitStore: RateLimitStore = config.REDIS_URL
    ? await RedisRateLimitStore.connect(config.REDIS_URL)
    : new MemoryRateLimitStore();
  const queue = await JobQueue.start(database.url, logger, {
    background: config.WORKERS_ENABLED,
    expireSeconds: config.JOB_EXPIRE_SECONDS,
  });
  const { app, container } = createApp({
    config,
    db: database.db,
    databaseUrl: database.url,
    logger,
    clock: systemClock,
    rateLimitStore,
    verifyToken: createTokenVerifier(config),
    queue,
  });
  await container.cache.start();
  const workers = container.workers;
  if (config.WORKERS_ENABLED) await workers.start();

  if (database.embedded) await printDemoOnFirstStart(database, config);

  const server: Server = app.listen(config.PORT, config.HOST, () => {
    logger.info({ port: config.PORT, embedded_database: database.embedded }, 'Voice Agent Management API listening');
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining requests');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await workers.stop();
    await container.cache.stop();
    await queue.stop();
    await rateLimitStore.close();
    await database.close();
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
