import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { createTokenVerifier } from './auth/token.js';
import { systemClock } from './clock.js';
import { parseConfig, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrationConfig } from './db/knex.js';
import { GracefulShutdown } from './http/graceful-shutdown.js';
import { createHttpServer } from './http/http-server.js';
import { MemoryRateLimitStore, RedisRateLimitStore, type RateLimitStore } from './http/rate-limit-store.js';
import { JobQueue } from './jobs/queue.js';
import { createLogger } from './logger.js';
import { loadDotEnv } from './env-file.js';
import { bootstrap, shellExports } from './ops/bootstrap.js';
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
      `API reference: ${base}/docs`,
      'Set BASE, KEY, TOKEN and AGENT for the examples (paste into your shell):',
      '',
      shellExports(base, { apiKey: demo.api_key, token: demo.dashboard_token, agentId: demo.agent.id }),
      '',
      'Try it:',
      `  curl -H "X-API-Key: $KEY" $BASE/v1/agents`,
      `  curl -H "Authorization: Bearer $TOKEN" $BASE/v1/api-keys`,
      '',
      'Lost these? npm run cli -- credentials --new-key --env prints a fresh token and a new key',
      '(the key is stored hashed and cannot be shown again; a new one is created instead).',
      '',
    ].join('\n'),
  );
}

/** parseConfig -> open database -> migrate -> createApp -> listen; SIGTERM drains, then closes the pool. */
async function main(): Promise<void> {
  loadDotEnv(); // .env, when present; the real environment wins
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
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    silenceMs: config.DATABASE_SILENCE_MS,
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

  const server: Server = createHttpServer(app).listen(config.PORT, config.HOST, () => {
    const { port } = server.address() as AddressInfo;
    const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
    logger.info(
      { host: config.HOST, port, embedded_database: database.embedded },
      `listening on http://${host}:${port}`,
    );
  });
  const graceful = new GracefulShutdown(server);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    const remaining = () => Math.max(0, config.SHUTDOWN_TIMEOUT_MS - (Date.now() - started));
    // Last resort: whatever hangs, the process is gone by the deadline.
    setTimeout(() => {
      logger.error({ signal }, 'shutdown deadline passed; exiting');
      logger.flush();
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS).unref();
    logger.info({ signal, timeout_ms: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: draining requests');
    // Requests get most of the time; the rest is kept for stopping workers and the database.
    const reserve = Math.min(3000, Math.floor(config.SHUTDOWN_TIMEOUT_MS / 3));
    const { forced } = await graceful.drain(Math.max(0, config.SHUTDOWN_TIMEOUT_MS - reserve));
    if (forced) logger.warn('shutdown: connections still open at the deadline were closed');
    await workers.stop();
    await container.cache.stop();
    await queue.stop(remaining() - 500);
    await rateLimitStore.close();
    // The embedded PostgreSQL (if any) is stopped last, after every connection to it is closed.
    await database.close();
    logger.info({ duration_ms: Date.now() - started }, 'stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // A stray rejection (a driver callback during an outage) is logged; it must not take the service down.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
