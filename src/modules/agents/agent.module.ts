import type { Logger } from 'pino';
import { CredentialsRepository } from '../../auth/credentials.repository.js';
import { LastUsedRecorder } from '../../auth/last-used-recorder.js';
import { poolNotify, ReadCache } from '../../cache/read-cache.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/knex.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { AgentAccess } from './agent-access.js';
import { AgentStatusService } from './agent-status.service.js';
import { registerAgentPaths } from './agent.openapi.js';
import { AgentRepository, type AgentRow } from './agent.repository.js';
import { agentEntries, AgentReads } from './agent-reads.js';
import { agentRouter, type AgentFromTemplate } from './agent.router.js';
import { AgentService } from './agent.service.js';
import { GreetingContactRepository } from './greeting-contact.repository.js';
import { GreetingPreviewService, type CallsTodayCounter } from './greeting-preview.service.js';

/**
 * The read side of agents and credentials, built before every module (src/container.ts puts
 * `cache` and `access` into the shared infrastructure; authentication reads `credentials`).
 */
export type AgentReadSide = {
  repository: AgentRepository;
  cache: ReadCache<AgentRow>;
  /** What authentication reads: the cache, or (cache off) the database, key and agent in one query. */
  credentials: ReadCache<AgentRow> | CredentialsRepository<AgentRow>;
  access: AgentAccess;
  /** Keys' last_used_at, batched: one statement every few seconds (main.ts flushes it on shutdown). */
  lastUsed: LastUsedRecorder;
};

export function buildAgentReads(deps: {
  db: Db;
  /** The same database as `db`, for the connection that listens for changes. */
  databaseUrl: string;
  config: Config;
  clock: Clock;
  logger: Logger;
}): AgentReadSide {
  const { db, config, clock, logger } = deps;
  const repository = new AgentRepository(db);
  const credentials = new CredentialsRepository(db, AgentReads);
  const cache = new ReadCache(
    credentials,
    agentEntries(repository),
    config.DATABASE_LISTEN_URL ?? deps.databaseUrl,
    poolNotify(db),
    clock,
    logger,
    config.READ_CACHE_ENABLED,
    { maxDelayMs: config.READ_CACHE_RECONNECT_MAX_MS, leaseMs: config.CACHE_LEASE_MS },
  );
  return {
    repository,
    cache,
    credentials: config.READ_CACHE_ENABLED ? cache : credentials,
    access: new AgentAccess(cache),
    lastUsed: new LastUsedRecorder((uses) => credentials.touchApiKeys(uses), logger),
  };
}

/** Exports its service: restoring a version and simulating a change use its rules. */
export function buildAgentModule(
  deps: SharedDeps & { agentReads: AgentReadSide; callsToday: CallsTodayCounter; templates?: AgentFromTemplate },
): BuiltModule<{ service: AgentService }> {
  const { db, agentAccess, clock, config } = deps;
  const repository = deps.agentReads.repository;
  const service = new AgentService(
    deps.audited,
    repository,
    deps.versions,
    agentAccess,
    clock,
    { allowPrivateWebhookTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS },
    deps.testCaseGuard,
  );
  const statuses = new AgentStatusService(repository, agentAccess, clock);
  const greetings = new GreetingPreviewService(agentAccess, new GreetingContactRepository(db), deps.callsToday, clock);
  return {
    module: {
      mounts: [{ path: '/agents', router: agentRouter(service, statuses, greetings, deps.templates) }],
      openapi: registerAgentPaths,
    },
    service,
  };
}
