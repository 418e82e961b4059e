import type { Router } from 'express';
import type { Logger } from 'pino';
import { ReadCache } from './cache/read-cache.js';
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
import { AgentStatusService } from './modules/agents/agent-status.service.js';
import { GreetingContactRepository } from './modules/agents/greeting-contact.repository.js';
import { GreetingPreviewService, type CallsTodayCounter } from './modules/agents/greeting-preview.service.js';
import { registerWorkflowPaths } from './modules/workflows/workflow.openapi.js';
import { workflowRouter } from './modules/workflows/workflow.router.js';
import { WorkflowService } from './modules/workflows/workflow.service.js';
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
import { registerMePaths } from './modules/me/me.openapi.js';
import { MeRepository } from './modules/me/me.repository.js';
import { meRouter } from './modules/me/me.router.js';
import { MeService } from './modules/me/me.service.js';
import { registerWebhookPaths } from './modules/webhooks/webhook.openapi.js';
import { WebhookDeliveryRepository } from './modules/webhooks/webhook-delivery.repository.js';
import { webhookDeliveryRouter } from './modules/webhooks/webhook-delivery.router.js';
import { WebhookDeliveryService } from './modules/webhooks/webhook-delivery.service.js';
import { WebhookDispatcher } from './modules/webhooks/webhook-dispatcher.js';
import { WebhookSecretRepository } from './modules/webhooks/webhook-secret.repository.js';
import { webhookSecretRouter } from './modules/webhooks/webhook-secret.router.js';
import { WebhookSecretService } from './modules/webhooks/webhook-secret.service.js';
import { WebhookWorker } from './modules/webhooks/webhook.worker.js';
import { guardOptionsFromConfig } from './outgoing/guarded-request.js';
import { registerContactPaths } from './modules/contacts/contact.openapi.js';
import { ContactRepository } from './modules/contacts/contact.repository.js';
import { contactRouter } from './modules/contacts/contact.router.js';
import { ContactService } from './modules/contacts/contact.service.js';
import { registerEmployeePaths } from './modules/employees/employee.openapi.js';
import { EmployeeRepository } from './modules/employees/employee.repository.js';
import { employeeRouter } from './modules/employees/employee.router.js';
import { EmployeeService } from './modules/employees/employee.service.js';
import { registerForwardingSlotPaths } from './modules/forwarding-slots/forwarding-slot.openapi.js';
import { ForwardingSlotRepository } from './modules/forwarding-slots/forwarding-slot.repository.js';
import { forwardingSlotRouter } from './modules/forwarding-slots/forwarding-slot.router.js';
import { ForwardingSlotService } from './modules/forwarding-slots/forwarding-slot.service.js';
import { ToolReferences } from './modules/tools/tool-references.js';
import { registerToolPaths } from './modules/tools/tool.openapi.js';
import { ToolRepository } from './modules/tools/tool.repository.js';
import { toolRouter } from './modules/tools/tool.router.js';
import { ToolService } from './modules/tools/tool.service.js';
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
  /** The same database as `db`, for the connection that listens for credential changes. */
  databaseUrl: string;
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

  const agentRepository = new AgentRepository(db);
  const credentials = new CredentialsRepository(db);
  const cache = new ReadCache(
    credentials,
    agentRepository,
    deps.databaseUrl,
    clock,
    deps.logger,
    config.READ_CACHE_ENABLED,
  );
  const agentAccess = new AgentAccess(cache);
  const events = new EventRecorder(deps.queue);
  const webhookDeliveries = new WebhookDeliveryRepository(db);
  const webhookSecrets = new WebhookSecretRepository(db);
  const webhookDispatcher = new WebhookDispatcher(
    db,
    deps.queue,
    webhookDeliveries,
    webhookSecrets,
    clock,
    guardOptionsFromConfig(config),
    deps.logger,
  );
  const webhookWorker = new WebhookWorker(db, deps.queue, webhookDispatcher, webhookDeliveries, deps.logger);
  const employeeRepository = new EmployeeRepository(db);
  const toolRepository = new ToolRepository(db);
  const toolReferences = new ToolReferences(employeeRepository, agentRepository, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  const kbDocuments = new KnowledgeBaseRepository(db);
  const kbIndex = new KnowledgeBaseIndexRepository(db);
  const kbJobs = new KnowledgeBaseJobs(deps.queue);
  const kbProcessor = new KnowledgeBaseProcessor(kbIndex, kbJobs, clock, deps.logger);
  const callRepository = new CallRepository(db);
  const callRetention = new CallRetention(callRepository, clock, deps.logger);
  const callsToday: CallsTodayCounter = (q) =>
    callRepository.countCallsToday(
      { id: q.agentId, organization_id: q.organizationId },
      q.phoneNumber,
      q.since,
      q.until,
    );

  const services = {
    health: new HealthService(db, clock, { version: config.APP_VERSION, commit: config.APP_COMMIT }),
    agents: new AgentService(agentRepository, agentAccess, clock, {
      allowPrivateWebhookTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    }),
    agentStatus: new AgentStatusService(agentRepository, agentAccess, clock),
    greetingPreview: new GreetingPreviewService(agentAccess, new GreetingContactRepository(db), callsToday, clock),
    workflows: new WorkflowService(db, agentAccess, clock),
    organizations: new OrganizationService(new OrganizationRepository(db), clock),
    apiKeys: new ApiKeyService(new ApiKeyRepository(db), clock, () => cache.sync()),
    webhookDeliveries: new WebhookDeliveryService(db, webhookDeliveries, agentAccess, webhookDispatcher, clock),
    webhookSecrets: new WebhookSecretService(webhookSecrets, clock),
    me: new MeService(new MeRepository(db), clock, { allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
    employees: new EmployeeService(db, employeeRepository, toolRepository, agentAccess, events, clock),
    forwardingSlots: new ForwardingSlotService(db, new ForwardingSlotRepository(db), agentAccess, clock),
    tools: new ToolService(db, toolRepository, toolReferences, agentAccess, clock),
    contacts: new ContactService(new ContactRepository(db), agentAccess, clock),
    knowledgeBase: new KnowledgeBaseService(db, kbDocuments, kbIndex, kbJobs, agentAccess, clock),
    organizationKnowledgeBase: new OrganizationKnowledgeBaseService(db, kbDocuments, kbJobs, clock),
    calls: new CallService(db, callRepository, events, agentAccess, clock),
  };

  /** Routers under /v1 behind authentication and rate limiting. */
  const routes: { path: string; router: Router }[] = [
    { path: '/agents', router: agentRouter(services.agents, services.agentStatus, services.greetingPreview) },
    { path: '/agents', router: workflowRouter(services.workflows) },
    { path: '/organization', router: organizationRouter(services.organizations) },
    { path: '/agents', router: webhookDeliveryRouter(services.webhookDeliveries) },
    { path: '/organization', router: webhookSecretRouter(services.webhookSecrets) },
    { path: '/me', router: meRouter(services.me) },
    { path: '/agents/:agentId/employees', router: employeeRouter(services.employees) },
    { path: '/agents/:agentId/forwarding-slots', router: forwardingSlotRouter(services.forwardingSlots) },
    { path: '/agents/:agentId/tools', router: toolRouter(services.tools) },
    { path: '/agents/:agentId/contacts', router: contactRouter(services.contacts) },
    { path: '/agents/:agentId/knowledge-base', router: knowledgeBaseRouter(services.knowledgeBase) },
    {
      path: '/organization/:orgId/knowledge-base',
      router: organizationKnowledgeBaseRouter(services.organizationKnowledgeBase),
    },
    { path: '/agents/:agentId/calls', router: callRouter(services.calls) },
  ];

  const openapi: OpenApiRegistration[] = [
    registerHealthPaths,
    registerApiKeyPaths,
    registerAgentPaths,
    registerWorkflowPaths,
    registerOrganizationPaths,
    registerWebhookPaths,
    registerMePaths,
    registerEmployeePaths,
    registerForwardingSlotPaths,
    registerToolPaths,
    registerContactPaths,
    registerKnowledgeBasePaths,
    registerCallPaths,
  ];

  /** Started by main.ts when WORKERS_ENABLED; tests drive them directly. */
  const backgroundWorkers: BackgroundWorker[] = [
    webhookWorker,
    new KnowledgeBaseWorker(deps.queue, kbProcessor),
    new CallRetentionWorker(deps.queue, callRetention, clock),
  ];

  return {
    cache,
    /** What authentication reads: the cache, or (cache off) the database, key and agent in one query. */
    credentials: config.READ_CACHE_ENABLED ? cache : credentials,
    events,
    webhookWorker,
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
