import { pino } from 'pino';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { createDb } from '../../src/db/knex.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import type { TestContext } from './context.js';
import { checkedHttp } from './contract.js';

/** The same app wired to a database port where nothing listens. */
export function appWithUnreachableDatabase(ctx: TestContext) {
  const db = createDb('postgres://postgres@127.0.0.1:1/none', 1, pino({ level: 'silent' }));
  const { app } = createApp({
    config: ctx.config,
    db,
    databaseUrl: 'postgres://postgres@127.0.0.1:1/none',
    logger: pino({ level: 'silent' }),
    clock: ctx.clock,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(ctx.config),
    queue: ctx.queue,
  });
  return checkedHttp(app, ctx.contract);
}
