import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { createTokenVerifier } from './auth/token.js';
import { systemClock } from './clock.js';
import { configWarnings, parseConfig, type Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrationConfig } from './db/knex.js';
import { GracefulShutdown } from './http/graceful-shutdown.js';
import { createHttpServer } from './http/http-server.js';
import { PortReservation } from './http/port-reservation.js';
import { keepTickObjectShape } from './platform/node.js';
import { openRateLimitStore } from './http/redis-rate-limit-store.js';
import { JobQueue } from './jobs/queue.js';
import { createLogger } from './logger.js';
import { IdleMemoryTrim } from './ops/idle-memory.js';
import { loadDotEnv } from './env-file.js';
import { bootstrap, shellExports } from './ops/bootstrap.js';
import { OpsRepository } from './ops/ops.repository.js';
import { withJwtSecret, withSecretsKey } from './ops/dev-secret.js';
import { setupFailureText, setupStep } from './setup-error.js';

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

/**
 * With DATABASE_URL nothing is created on its own (it may be a production database): an empty one
 * gets a hint naming the command that creates the first organization.
 */
async function hintWithoutOrganization(database: Database, logger: Logger): Promise<void> {
  if ((await new OpsRepository(database.db).countOrganizations()) > 0) return;
  logger.info(
    'no organization yet: `npm run cli -- bootstrap` creates one with a user, a dashboard token, an API key and ' +
      'an agent (docs/operations.md)',
  );
}

/** The database, migrated; closed again (the embedded PostgreSQL stopped) when migrating fails. */
async function openMigratedDatabase(config: Config, logger: Logger): Promise<Database> {
  const database = await openDatabase(config, logger);
  try {
    const [, applied] = await database.db.migrate.latest(migrationConfig);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    database.answered();
    return database;
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}

/**
 * parseConfig -> reserve PORT -> open database -> migrate -> createApp -> listen; SIGTERM drains,
 * then closes the pool. PORT is bound first, so that a port in use stops the start before it
 * changed anything (migrations, the demo organization and its printed credentials).
 */
async function main(): Promise<void> {
  keepTickObjectShape();
  loadDotEnv(); // .env, when present; the real environment wins
  const config = await setupStep('config', undefined, () => withSecretsKey(withJwtSecret(parseConfig(process.env))));
  const logger = createLogger(config);
  for (const warning of configWarnings(config)) logger.warn(warning);
  const reservation = await PortReservation.reserve(config.PORT, config.HOST);
  const database = await setupStep('database', config.DATABASE_URL, () => openMigratedDatabase(config, logger));
  try {
    await serve(config, logger, reservation, database);
  } catch (error) {
    // A start that fails from here on leaves no embedded PostgreSQL behind.
    await database.close().catch(() => {});
    throw error;
  }
}

/** The app on the opened database: queue, workers, the HTTP server on the reserved port, the shutdown. */
async function serve(config: Config, logger: Logger, reservation: PortReservation, database: Database): Promise<void> {
  // Redis down at start: a warning, and per-instance counters until it answers (never a failed start).
  const rateLimitStore = await openRateLimitStore(config, logger);
  const queue = await setupStep('database', config.DATABASE_URL, () =>
    JobQueue.start(database.url, logger, {
      background: config.WORKERS_ENABLED,
      expireSeconds: config.JOB_EXPIRE_SECONDS,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      silenceMs: config.DATABASE_SILENCE_MS,
    }),
  );
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
  await container.reads.start();
  const workers = container.workers;
  if (config.WORKERS_ENABLED) await workers.start();

  if (database.embedded) await printDemoOnFirstStart(database, { ...config, PORT: reservation.port });
  else await hintWithoutOrganization(database, logger);

  const server: Server = createHttpServer(app);
  const graceful = new GracefulShutdown(server);
  const idleTrim = new IdleMemoryTrim(server, logger);
  idleTrim.start();
  await reservation.attach(server);
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  logger.info(
    { host: config.HOST, port: reservation.port, embedded_database: database.embedded },
    `listening on http://${host}:${reservation.port}`,
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    queue.expectShutdown();
    idleTrim.stop();
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
    // The keys used since the last batch: their last_used_at is written before the pool closes.
    await container.lastUsed.close();
    await container.cache.stop();
    await container.reads.stop();
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
  // One line naming the cause and the fix; the stack only when asked for.
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  process.stderr.write(setupFailureText(error, debug));
  process.exit(1);
});
