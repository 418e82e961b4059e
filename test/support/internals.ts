import type { Logger } from 'pino';
import { createTokenVerifier } from '../../src/auth/token.js';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { buildContainer, type Container } from '../../src/container.js';
import type { Db } from '../../src/db/knex.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import type { JobQueue } from '../../src/jobs/queue.js';

export type Internals = ReturnType<typeof internalsOf>;

/**
 * The background pieces tests drive directly (record an event, drain the webhook queue, process a
 * document, run retention), taken from the modules' build output of the app's own container: the
 * same objects main.ts starts as workers, on the same database, queue, clock and config.
 */
export function internalsOf(container: Container) {
  const { built, shared } = container;
  return {
    events: shared.events,
    webhookWorker: built.webhooks.worker,
    webhookSweeper: built.webhooks.sweeper,
    kbJobs: built.knowledgeBase.jobs,
    kbProcessor: built.knowledgeBase.processor,
    callRepository: built.calls.repository,
    callRetention: built.calls.retention,
    auditRetention: built.auditLog.retention,
    idempotencyCleanup: built.idempotency.cleanup,
    consentExpiry: built.outbound.consentExpiry,
    experimentEnding: built.experiments.ending,
  };
}

/**
 * Another server instance on the same database (its own job queue connections, its own config):
 * the production container built again with those, not started, and its background pieces.
 */
export function buildInternals(deps: { db: Db; queue: JobQueue; clock: Clock; config: Config; logger: Logger }) {
  const container = buildContainer({
    ...deps,
    databaseUrl: deps.config.DATABASE_URL!,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(deps.config),
  });
  return internalsOf(container);
}
