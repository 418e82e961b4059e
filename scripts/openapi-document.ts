/**
 * Writes the OpenAPI document that the app serves at /v1/openapi.json to a file (or stdout), without
 * a database: the app is built over a pool that never connects and asked over HTTP, so the file is
 * exactly what a client downloads. Usage: tsx scripts/openapi-document.ts [file]
 */
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { createTokenVerifier } from '../src/auth/token.js';
import { systemClock } from '../src/clock.js';
import { parseConfig } from '../src/config.js';
import { createDb } from '../src/db/knex.js';
import { createHttpServer } from '../src/http/http-server.js';
import { MemoryRateLimitStore } from '../src/http/rate-limit-store.js';
import { JobQueue } from '../src/jobs/queue.js';

/** The app on a random local port, over a database pool that never connects. */
export async function startDocumentServer(env: Record<string, string> = {}) {
  const config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'only-used-to-build-the-document-0123456789',
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    ...env,
  });
  const db = createDb(config.DATABASE_URL!, 1);
  const { app } = createApp({
    config,
    db,
    databaseUrl: config.DATABASE_URL!,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(config),
    // Never started: serving the document and the docs page enqueues no job.
    queue: Object.create(JobQueue.prototype) as JobQueue,
  });
  const server = createHttpServer(app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.destroy();
    },
  };
}

export async function fetchOpenApiDocument(env: Record<string, string> = {}): Promise<string> {
  const server = await startDocumentServer(env);
  try {
    const response = await fetch(`${server.url}/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
    return `${JSON.stringify(await response.json(), null, 2)}\n`;
  } finally {
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await fetchOpenApiDocument(
    process.env.PUBLIC_BASE_URL ? { PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL } : {},
  );
  const file = process.argv[2];
  if (file) writeFileSync(file, text);
  else process.stdout.write(text);
}
