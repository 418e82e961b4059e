import type { Router } from 'express';
import type { Logger } from 'pino';
import { CredentialsRepository } from './auth/credentials.repository.js';
import { EventRecorder } from './events/event.repository.js';
import type { TokenVerifier } from './auth/token.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { RateLimitStore } from './http/rate-limit-store.js';
import type { OpenApiRegistration } from './openapi/document.js';
import type { JobQueue } from './jobs/queue.js';
import { Workers, type BackgroundWorker } from './jobs/workers.js';
import { AgentAccess } from './modules/agents/agent-access.js';
import { registerAgentPaths } from './modules/agents/agent.openapi.js';
import { AgentRepository } from './modules/agents/agent.repository.js';
import { agentRouter } from './modules/agents/agent.router.js';
import { AgentService } from './modules/agents/agent.service.js';
import { registerApiKeyPaths } from './modules/api-keys/api-key.openapi.js';
import { ApiKeyRepository } from './modules/api-keys/api-key.repository.js';
import { apiKeyRouter } from './modules/api-keys/api-key.router.js';
import { ApiKeyService } from './modules/api-keys/api-key.service.js';
import { registerHealthPaths } from './modules/health/health.openapi.js';
import { HealthService } from './modules/health/health.service.js';
import { registerOrganizationPaths } from './modules/organizations/organization.openapi.js';
import { OrganizationRepository } from './modules/organizations/organization.repository.js';
import { organizationRouter } from './modules/organizations/organization.router.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { KnowledgeBaseJobs, KnowledgeBaseProcessor, KnowledgeBaseWorker } from './jobs/kb-processor.js';
import { CallRetention, CallRetentionWorker } from './jobs/retention.js';
import { registerCallPaths } from './modules/calls/call.openapi.js';
import { CallRepository } from './modules/calls/call.repository.js';
import { callRouter } from './modules/calls/call.router.js';
import { CallService } from './modules/calls/call.service.js';
import { KnowledgeBaseIndexRepository } from './modules/knowledge-base/kb-index.repository.js';
import { registerKnowledgeBasePaths } from './modules/knowledge-base/knowledge-base.openapi.js';
import { KnowledgeBaseRepository } from './modules/knowledge-base/knowledge-base.repository.js';
import { knowledgeBaseRouter } from './modules/knowledge-base/knowledge-base.router.js';
import { KnowledgeBaseService } from './modules/knowledge-base/knowledge-base.service.js';
import { organizationKnowledgeBaseRouter } from './modules/knowledge-base/organization-knowledge-base.router.js';
import { OrganizationKnowledgeBaseService } from './modules/knowledge-base/organization-knowledge-base.service.js';

export type AppDeps = {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  rateLimitStore: RateLimitStore;
  verifyToken: TokenVerifier;
  queue: JobQueue;
};

export type Container = ReturnType<typeof buildContainer>;

/** Hand wiring: repositories(db) -> services -> routers. */
export function buildContainer(deps: AppDeps) {
  const { db, clock, config } = deps;

  const credentials = new CredentialsRepository(db);
  const agentRepository = new AgentRepository(db);
  const agentAccess = new AgentAccess(agentRepository);
  const events = new EventRecorder(deps.queue);
  const kbDocuments = new KnowledgeBaseRepository(db);
  const kbIndex = new KnowledgeBaseIndexRepository(db);
  const kbJobs = new KnowledgeBaseJobs(deps.queue);
  const kbProcessor = new KnowledgeBaseProcessor(kbIndex, kbJobs, clock, deps.logger);
  const callRepository = new CallRepository(db);
  const callRetention = new CallRetention(callRepository, clock, deps.logger);

  const services = {
    health: new HealthService(db, clock, { version: config.APP_VERSION, commit: config.APP_COMMIT }),
    agents: new AgentService(agentRepository, agentAccess),
    organizations: new OrganizationService(new OrganizationRepository(db)),
    apiKeys: new ApiKeyService(new ApiKeyRepository(db), clock),
    knowledgeBase: new KnowledgeBaseService(db, kbDocuments, kbIndex, kbJobs, agentAccess, clock),
    organizationKnowledgeBase: new OrganizationKnowledgeBaseService(db, kbDocuments, kbJobs, clock),
    calls: new CallService(db, callRepository, events, agentAccess, clock),
  };

  /** Routers under /v1 behind authentication and rate limiting. */
  const routes: { path: string; router: Router }[] = [
    { path: '/agents', router: agentRouter(services.agents) },
    { path: '/organization', router: organizationRouter(services.organizations) },
    { path: '/agents/:agentId/knowledge-base', router: knowledgeBaseRouter(services.knowledgeBase) },
    { path: '/organization/:orgId/knowledge-base', router: organizationKnowledgeBaseRouter(services.organizationKnowledgeBase) },
    { path: '/agents/:agentId/calls', router: callRouter(services.calls) },
  ];

  const openapi: OpenApiRegistration[] = [registerHealthPaths, registerApiKeyPaths, registerAgentPaths, registerOrganizationPaths];
  openapi.push(registerKnowledgeBasePaths, registerCallPaths);

  /** Started by main.ts when WORKERS_ENABLED; tests drive them directly. */
  const backgroundWorkers: BackgroundWorker[] = [];
  backgroundWorkers.push(new KnowledgeBaseWorker(deps.queue, kbJobs, kbProcessor), new CallRetentionWorker(deps.queue, callRetention));

  return {
    credentials,
    events,
    services,
    routes,
    apiKeyRouter: apiKeyRouter(services.apiKeys),
    openapi,
    workers: new Workers(backgroundWorkers),
    kbJobs,
    kbProcessor,
    callRepository,
    callRetention,
  };
}
