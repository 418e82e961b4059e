/**
 * npm run fuzz [-- --count 10000 --seed 1 --concurrency 8]
 *
 * Starts the API on a random port against a throwaway database (a new database on the server of
 * DATABASE_URL, dropped afterwards, or an embedded PostgreSQL in a temp dir), seeds a real
 * organization, key and agent with one of every sub-resource, then sends `count` generated
 * hostile requests over every operation of /v1/openapi.json. Prints the counts by status and kind;
 * exits 1 if any response is >= 500 or an error response lacks the `{error: {code, message}}` envelope.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { createTokenVerifier } from '../src/auth/token.js';
import { systemClock } from '../src/clock.js';
import { parseConfig } from '../src/config.js';
import { startThrowawayEmbeddedPostgres } from '../src/db/embedded.js';
import { createDb, migrationConfig } from '../src/db/knex.js';
import { createHttpServer } from '../src/http/http-server.js';
import { MemoryRateLimitStore } from '../src/http/rate-limit-store.js';
import { JobQueue } from '../src/jobs/queue.js';
import { fuzzRequests, operationsOf } from './fuzz/requests.js';
import { runFuzz } from './fuzz/runner.js';
import { seedWorld } from './fuzz/world.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '20261123' },
    concurrency: { type: 'string', default: '8' },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);

/** A database of the run's own: on DATABASE_URL's server, or in an embedded PostgreSQL. */
async function throwawayDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const logger = pino({ level: 'silent' });
  let adminUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!adminUrl) {
    const server = await startThrowawayEmbeddedPostgres({ prefix: 'fuzz', port: 0, logger });
    adminUrl = server.url;
    stopEmbedded = server.stop;
  }
  const name = `vam_fuzz_${randomBytes(4).toString('hex')}`;
  const admin = createDb(adminUrl, 1);
  await admin.raw(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
      await stopEmbedded();
    },
  };
}

async function main(): Promise<number> {
  const database = await throwawayDatabase();
  const logger = pino({ level: 'silent' });
  const config = parseConfig({
    ...process.env,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    JWT_SECRET: randomBytes(32).toString('hex'),
    WORKERS_ENABLED: 'false',
  });
  const db = createDb(database.url, config.DATABASE_POOL_MAX, logger);
  let server: Server | undefined;
  let queue: JobQueue | undefined;
  try {
    await db.migrate.latest(migrationConfig);
    queue = await JobQueue.start(database.url, logger, { background: false });
    const { app, container } = createApp({
      config,
      db,
      databaseUrl: database.url,
      logger,
      clock: systemClock,
      rateLimitStore: new MemoryRateLimitStore(),
      verifyToken: createTokenVerifier(config),
      queue,
    });
    await container.cache.start();
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const world = await seedWorld(db, config, baseUrl);
    const document = await (await fetch(`${baseUrl}/v1/openapi.json`)).json();
    const operations = operationsOf(document);
    process.stdout.write(`fuzz: ${count} requests over ${operations.length} operations, seed ${seed}\n`);
    const started = Date.now();
    const report = await runFuzz(baseUrl, fuzzRequests(operations, world, { seed, count }), {
      concurrency,
      onProgress: (done) => {
        if (done % 1000 === 0) process.stdout.write(`  ${done} sent\n`);
      },
    });
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(`\n${report.total} requests in ${seconds.toFixed(1)} s\n\nBy status:\n`);
    for (const [status, n] of Object.entries(report.byStatus).sort()) process.stdout.write(`  ${status}: ${n}\n`);
    process.stdout.write('\nBy kind (statuses):\n');
    for (const [kind, n] of Object.entries(report.byKind).sort()) {
      const statuses = Object.entries(report.byKindAndStatus)
        .filter(([key]) => key.startsWith(`${kind} `))
        .map(([key, m]) => `${key.split(' ')[1]}: ${m}`)
        .join(', ');
      process.stdout.write(`  ${kind}: ${n} (${statuses})\n`);
    }
    const serverErrors = report.failures.filter((f) => f.status >= 500).length;
    process.stdout.write(
      `\n>= 500: ${serverErrors}; other failures (no envelope, no answer): ${report.failures.length - serverErrors}\n`,
    );
    for (const failure of report.failures.slice(0, 20)) process.stdout.write(`  ${JSON.stringify(failure)}\n`);
    await container.cache.stop();
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    await queue?.stop();
    await db.destroy();
    await database.drop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`fuzz failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  },
);
