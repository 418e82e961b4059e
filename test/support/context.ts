import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { parseConfig, type Config } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { MemoryRateLimitStore, type RateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Builders } from './builders.js';
import { checkedHttp, contractCheckerFor, servedDocument } from './contract.js';
import { internalsOf } from './internals.js';
import { createAdminDb, databaseUrl } from './database-url.js';
import { TestClock } from './test-clock.js';

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;

/** Creates database `name` as a copy of `template`, retrying while another file clones it too. */
export async function cloneTemplate(admin: Db, name: string, template: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.raw(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
      return;
    } catch (error) {
      // Two files cloning at the same instant can see each other on the template; try again.
      if (attempt >= 20 || !String(error).includes('is being accessed by other users')) throw error;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
}

/**
 * A database of this file's own (cloned from the migrated template), the app wired to it, a clock
 * the test controls and builders for the data. Call `close()` in afterAll.
 */
export async function createTestContext(
  overrides: {
    /** Settings on top of the test defaults; a function gets the file database's URL. */
    config?: Record<string, string> | ((url: string) => Record<string, string>);
    rateLimitStore?: RateLimitStore;
  } = {},
) {
  const adminUrl = inject('adminUrl');
  const template = inject('templateDatabase');
  const name = `${template.replace('vam_tpl_', 'vam_t_')}_${randomBytes(4).toString('hex')}`;
  const admin = createAdminDb(adminUrl);
  await cloneTemplate(admin, name, template);
  const url = databaseUrl(adminUrl, name);

  const config: Config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: url,
    JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SECRETS_KEY: '6a1f0c9e2b7d4a8f3e5c1b9d7f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a',
    ...(typeof overrides.config === 'function' ? overrides.config(url) : overrides.config),
  });
  const db = createDb(url, 8);
  const logger = pino({ level: 'silent' });
  const clock = new TestClock();
  const queue = await JobQueue.start(url, logger, { background: false });
  const rateLimitStore = overrides.rateLimitStore ?? new MemoryRateLimitStore();
  const { app, container } = createApp({
    config,
    db,
    databaseUrl: url,
    logger,
    clock,
    rateLimitStore,
    verifyToken: createTokenVerifier(config),
    queue,
  });

  await container.cache.start();
  const syncCaches = () => container.cache.sync();
  // The server main.ts runs, listening for the whole file; requests go to it over TCP.
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Every answer `http` receives is checked against the document this app serves (test/support/contract.ts).
  const openapi = await servedDocument(baseUrl);
  const contract = contractCheckerFor(openapi);

  return {
    app,
    container,
    config,
    db,
    clock,
    queue,
    logger,
    /** The file's HTTP server (src/http/http-server.ts, as main.ts runs it) and its address. */
    server,
    baseUrl,
    /** supertest on the server; every answer must match the served OpenAPI document. */
    http: checkedHttp(baseUrl, contract),
    /** The served OpenAPI document and its checker, for apps a test builds itself (`checkedHttp(app, ctx.contract)`). */
    openapi,
    contract,
    /** Background pieces (events, webhook worker, KB processor, retention) from the modules' build output. */
    internals: internalsOf(container),
    /**
     * Another instance of the app on the same database, pool and job queue, with a rate-limit store
     * and read cache of its own (start its cache to have it listen; stop it in afterAll).
     */
    anotherApp(settings: Partial<Config> = {}) {
      return createApp({
        config: { ...config, ...settings },
        db,
        databaseUrl: url,
        logger,
        clock,
        rateLimitStore: new MemoryRateLimitStore(),
        verifyToken: createTokenVerifier(config),
        queue,
      });
    },
    /** After changing keys, memberships or agents with plain SQL: wait until the app has seen it. */
    syncCaches,
    build: new Builders(db, config, syncCaches),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await container.lastUsed.close();
      await container.cache.stop();
      await queue.stop();
      await db.destroy();
      await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    },
  };
}
