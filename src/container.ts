import type { Logger } from 'pino';
import { AuditLogRepository } from './audit/audit-log.repository.js';
import { AuditRecorder } from './audit/audit-recorder.js';
import { withTransactionHook } from './audit/audited-db.js';
import { poolNotify, ReadCache } from './cache/read-cache.js';
import { CredentialsRepository } from './auth/credentials.repository.js';
import { LastUsedRecorder } from './auth/last-used-recorder.js';
import { EventRecorder } from './events/event-recorder.js';
import type { TokenVerifier } from './auth/token.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { RateLimitStore } from './http/rate-limit-store.js';
import { mountModule, type MountedModule } from './http/api-module.js';
import type { JobQueue } from './jobs/queue.js';
import { Workers, type BackgroundWorker } from './jobs/workers.js';
import { PartitionMaintenance } from './db/partitions.js';
import { ReadRouting } from './db/replicas.js';
import { AppError } from './errors/index.js';
import { PartitionWorker } from './jobs/partition.worker.js';
import { AgentAccess } from './modules/agents/agent-access.js';
import { AgentRepository, agentJsonSql, agentRowFromJson } from './modules/agents/agent.repository.js';
import { WorkflowRepository } from './modules/workflows/workflow.repository.js';
import { AgentService } from './modules/agents/agent.service.js';
import { AgentStatusService } from './modules/agents/agent-status.service.js';
import { GreetingContactRepository } from './modules/agents/greeting-contact.repository.js';
import { GreetingPreviewService, type CallsTodayCounter } from './modules/agents/greeting-preview.service.js';
import { WorkflowService } from './modules/workflows/workflow.service.js';
import { ApiKeyRepository } from './modules/api-keys/api-key.repository.js';
import { ApiKeyService } from './modules/api-keys/api-key.service.js';
import { HealthService } from './modules/health/health.service.js';
import { OrganizationRepository } from './modules/organizations/organization.repository.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { MeRepository } from './modules/me/me.repository.js';
import { MeService } from './modules/me/me.service.js';
import { WebhookDeliveryRepository } from './modules/webhooks/webhook-delivery.repository.js';
import { WebhookDeliveryService } from './modules/webhooks/webhook-delivery.service.js';
import { WebhookDispatcher } from './modules/webhooks/webhook-dispatcher.js';
import { WebhookSecretRepository } from './modules/webhooks/webhook-secret.repository.js';
import { WebhookSecretService } from './modules/webhooks/webhook-secret.service.js';
import { WebhookTestService } from './modules/webhooks/webhook-test.service.js';
import { WebhookWorker } from './modules/webhooks/webhook.worker.js';
import { WebhookSweepRepository } from './modules/webhooks/webhook-sweep.repository.js';
import { WebhookSweeper, WebhookSweepWorker } from './modules/webhooks/webhook-sweeper.js';
import { Metrics } from './metrics/metrics.js';
import { guardOptionsFromConfig } from './outgoing/guarded-request.js';
import { ContactRepository } from './modules/contacts/contact.repository.js';
import { ContactService } from './modules/contacts/contact.service.js';
import { EmployeeRepository } from './modules/employees/employee.repository.js';
import { EmployeeService } from './modules/employees/employee.service.js';
import { ForwardingSlotRepository } from './modules/forwarding-slots/forwarding-slot.repository.js';
import { ForwardingSlotService } from './modules/forwarding-slots/forwarding-slot.service.js';
import { ToolReferences } from './modules/tools/tool-references.js';
import { ToolRepository } from './modules/tools/tool.repository.js';
import { ToolService } from './modules/tools/tool.service.js';
import { IdempotencyCleanupWorker } from './modules/idempotency/idempotency-cleanup.worker.js';
import { IdempotencyRepository } from './modules/idempotency/idempotency.repository.js';
import { IdempotencyService } from './modules/idempotency/idempotency.service.js';
import { KnowledgeBaseJobs, KnowledgeBaseProcessor, KnowledgeBaseWorker } from './modules/knowledge-base/kb.worker.js';
import { CallRetention, CallRetentionWorker } from './modules/calls/call-retention.worker.js';
import { AuditRetention, AuditRetentionWorker } from './modules/audit-log/audit-retention.worker.js';
import { agentVersionModule } from './modules/agent-versions/agent-version.module.js';
import { AgentVersionRecorder } from './modules/agent-versions/agent-version.recorder.js';
import { AgentVersionRepository } from './modules/agent-versions/agent-version.repository.js';
import { AgentVersionService } from './modules/agent-versions/agent-version.service.js';
import { auditLogModule } from './modules/audit-log/audit-log.module.js';
import { AuditLogService } from './modules/audit-log/audit-log.service.js';
import { CallRepository } from './modules/calls/call.repository.js';
import { CallService } from './modules/calls/call.service.js';
import { KnowledgeBaseIndexRepository } from './modules/knowledge-base/kb-index.repository.js';
import { KnowledgeBaseRepository } from './modules/knowledge-base/knowledge-base.repository.js';
import { KnowledgeBaseService } from './modules/knowledge-base/knowledge-base.service.js';
import { OrganizationKnowledgeBaseService } from './modules/knowledge-base/organization-knowledge-base.service.js';
import { agentModule } from './modules/agents/agent.module.js';
import { apiKeyModule } from './modules/api-keys/api-key.module.js';
import { callModule } from './modules/calls/call.module.js';
import { CallStatsRepository } from './modules/calls/call-stats.repository.js';
import { CallStatsService } from './modules/calls/call-stats.service.js';
import { CallExportService } from './modules/calls/call-export.service.js';
import { ExportSlotRepository } from './modules/calls/call-export-slots.repository.js';
import { contactModule } from './modules/contacts/contact.module.js';
import { employeeModule } from './modules/employees/employee.module.js';
import { forwardingSlotModule } from './modules/forwarding-slots/forwarding-slot.module.js';
import { healthModule } from './modules/health/health.module.js';
import { knowledgeBaseModule } from './modules/knowledge-base/knowledge-base.module.js';
import { meModule } from './modules/me/me.module.js';
import { organizationModule } from './modules/organizations/organization.module.js';
import { toolModule } from './modules/tools/tool.module.js';
import { webhookModule } from './modules/webhooks/webhook.module.js';
import { workflowModule } from './modules/workflows/workflow.module.js';
import { dataSubjectModule } from './modules/privacy/data-subject.module.js';
import { DataSubjectRepository } from './modules/privacy/data-subject.repository.js';
import { DataSubjectService } from './modules/privacy/data-subject.service.js';
import { CallSimulator } from './modules/simulation/call-simulator.js';
import { simulationModule } from './modules/simulation/simulation.module.js';
import { SimulationRepository } from './modules/simulation/simulation.repository.js';
import { SimulationService } from './modules/simulation/simulation.service.js';
import { TestCaseGuard } from './modules/simulation/test-case.guard.js';
import { TestCaseService } from './modules/simulation/test-case.service.js';

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
  const { clock, config } = deps;
  const auditLog = new AuditLogRepository(deps.db);
  // Streaming standbys for the heavy reads (DATABASE_REPLICA_URLS; main.ts starts and stops their checks).
  const reads = new ReadRouting(
    deps.db,
    config.DATABASE_REPLICA_URLS,
    { maxLagMs: config.REPLICA_MAX_LAG_MS, poolMax: config.DATABASE_POOL_MAX },
    deps.logger,
    (error) => error instanceof AppError,
  );
  const auditRecorder = new AuditRecorder(auditLog, clock, deps.logger, (auth) => reads.noteWrite(auth));
  // Every transaction a service opens during a write request also writes that request's audit row.
  const db = withTransactionHook(deps.db, (trx) => auditRecorder.inTransaction(trx));

  const agentRepository = new AgentRepository(db);
  const workflowRepository = new WorkflowRepository(db);
  const credentials = new CredentialsRepository(db, { sql: agentJsonSql, fromJson: agentRowFromJson });
  const cache = new ReadCache(
    credentials,
    agentRepository,
    config.DATABASE_LISTEN_URL ?? deps.databaseUrl,
    poolNotify(deps.db),
    clock,
    deps.logger,
    config.READ_CACHE_ENABLED,
    { maxDelayMs: config.READ_CACHE_RECONNECT_MAX_MS, leaseMs: config.CACHE_LEASE_MS },
  );
  // Keys' last_used_at, batched: one statement every few seconds, not one per key (main.ts flushes it on shutdown).
  const lastUsed = new LastUsedRecorder((uses) => credentials.touchApiKeys(uses), deps.logger);
  const agentAccess = new AgentAccess(cache);
  const events = new EventRecorder(deps.queue);
  const webhookDeliveries = new WebhookDeliveryRepository(db);
  const webhookSecrets = new WebhookSecretRepository(db);
  const metrics = new Metrics(db, deps.queue, { rateLimitStore: deps.rateLimitStore });
  const webhookDispatcher = new WebhookDispatcher(
    db,
    deps.queue,
    webhookDeliveries,
    webhookSecrets,
    clock,
    guardOptionsFromConfig(config),
    deps.logger,
    metrics,
    config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
  );
  const webhookWorker = new WebhookWorker(db, deps.queue, webhookDispatcher, deps.logger);
  const webhookSweeper = new WebhookSweeper(new WebhookSweepRepository(db), deps.queue, clock, deps.logger);
  const employeeRepository = new EmployeeRepository(db);
  const toolRepository = new ToolRepository(db);
  const toolReferences = new ToolReferences(employeeRepository, agentRepository, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  const kbDocuments = new KnowledgeBaseRepository(db);
  const kbIndex = new KnowledgeBaseIndexRepository(db);
  const kbJobs = new KnowledgeBaseJobs(deps.queue);
  const kbProcessor = new KnowledgeBaseProcessor(db, kbIndex, kbJobs, clock, deps.logger, { events });
  const callRepository = new CallRepository(db);
  const callRetention = new CallRetention(callRepository, clock, deps.logger);
  const callsToday: CallsTodayCounter = (q) =>
    callRepository.countCallsToday(
      { id: q.agentId, organization_id: q.organizationId },
      q.phoneNumber,
      q.since,
      q.until,
    );

  const agentVersions = new AgentVersionRepository(db);
  const versionRecorder = new AgentVersionRecorder(agentVersions, events, clock);
  const simulationRepository = new SimulationRepository(db);
  const callSimulator = new CallSimulator(simulationRepository, callsToday);
  // Every write that changes what a call does checks the agent's saved test cases in its transaction.
  const testCaseGuard = new TestCaseGuard(simulationRepository, callSimulator);

  const services = {
    health: new HealthService(db, clock, { version: config.APP_VERSION, commit: config.APP_COMMIT }),
    agents: new AgentService(
      db,
      agentRepository,
      versionRecorder,
      agentAccess,
      clock,
      { allowPrivateWebhookTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS },
      testCaseGuard,
    ),
    agentStatus: new AgentStatusService(agentRepository, agentAccess, clock),
    greetingPreview: new GreetingPreviewService(agentAccess, new GreetingContactRepository(db), callsToday, clock),
    workflows: new WorkflowService(db, workflowRepository, agentAccess, versionRecorder, clock, testCaseGuard),
    organizations: new OrganizationService(db, new OrganizationRepository(db), clock),
    apiKeys: new ApiKeyService(db, new ApiKeyRepository(db), clock, () => cache.sync()),
    webhookDeliveries: new WebhookDeliveryService(db, webhookDeliveries, agentAccess, webhookDispatcher, clock),
    webhookSecrets: new WebhookSecretService(webhookSecrets, clock),
    webhookTests: new WebhookTestService(agentAccess, webhookDeliveries, webhookDispatcher),
    me: new MeService(db, new MeRepository(db), clock, { allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
    employees: new EmployeeService(
      db,
      employeeRepository,
      toolRepository,
      agentAccess,
      events,
      clock,
      versionRecorder,
      testCaseGuard,
    ),
    forwardingSlots: new ForwardingSlotService(db, new ForwardingSlotRepository(db), agentAccess, clock, testCaseGuard),
    tools: new ToolService(db, toolRepository, toolReferences, agentAccess, versionRecorder, clock, testCaseGuard),
    contacts: new ContactService(db, new ContactRepository(db), agentAccess, clock, testCaseGuard),
    knowledgeBase: new KnowledgeBaseService(db, kbDocuments, kbIndex, kbJobs, agentAccess, clock),
    organizationKnowledgeBase: new OrganizationKnowledgeBaseService(db, kbDocuments, kbJobs, clock),
    calls: new CallService(db, callRepository, events, agentAccess, clock, reads),
    callStats: new CallStatsService(new CallStatsRepository(db), agentAccess, reads),
    callExport: new CallExportService(callRepository, new ExportSlotRepository(db), agentAccess, clock),
    auditLog: new AuditLogService(auditLog),
    idempotency: new IdempotencyService(new IdempotencyRepository(db), clock),
    // Erasure batches run on the plain handle: only the completing transaction writes the audit row.
    dataSubjects: new DataSubjectService(db, deps.db, new DataSubjectRepository(db), events, clock),
  };
  const agentVersionService = new AgentVersionService(
    db,
    agentVersions,
    versionRecorder,
    toolRepository,
    agentRepository,
    workflowRepository,
    services.agents,
    services.tools,
    agentAccess,
    clock,
    testCaseGuard,
  );

  const simulationService = new SimulationService(agentAccess, services.agents, agentVersions, callSimulator, clock);
  const testCaseService = new TestCaseService(
    db,
    simulationRepository,
    agentAccess,
    services.agents,
    simulationService,
    callSimulator,
    clock,
  );

  /**
   * Every module once, in the order of the OpenAPI document: its mounts (path, access, router) and
   * its OpenAPI registration come from the module itself.
   */
  const modules: MountedModule[] = [
    mountModule(healthModule, services.health),
    mountModule(apiKeyModule, services.apiKeys),
    mountModule(agentModule, services.agents, services.agentStatus, services.greetingPreview),
    mountModule(workflowModule, services.workflows),
    mountModule(organizationModule, services.organizations),
    mountModule(webhookModule, services.webhookDeliveries, services.webhookSecrets, services.webhookTests),
    mountModule(meModule, services.me),
    mountModule(employeeModule, services.employees),
    mountModule(forwardingSlotModule, services.forwardingSlots),
    mountModule(toolModule, services.tools),
    mountModule(contactModule, services.contacts),
    mountModule(knowledgeBaseModule, services.knowledgeBase, services.organizationKnowledgeBase),
    mountModule(callModule, services.calls, services.callStats, services.callExport),
    mountModule(agentVersionModule, agentVersionService),
    mountModule(simulationModule, simulationService, testCaseService),
    mountModule(auditLogModule, services.auditLog),
    mountModule(dataSubjectModule, services.dataSubjects),
  ];

  /** Started by main.ts when WORKERS_ENABLED; tests drive them directly. */
  const partitions = new PartitionMaintenance(db, deps.logger);
  const backgroundWorkers: BackgroundWorker[] = [
    new PartitionWorker(deps.queue, partitions, clock),
    webhookWorker,
    new WebhookSweepWorker(deps.queue, webhookSweeper),
    new KnowledgeBaseWorker(deps.queue, kbProcessor),
    new CallRetentionWorker(deps.queue, callRetention, clock),
    new AuditRetentionWorker(
      deps.queue,
      new AuditRetention(auditLog, config.AUDIT_RETENTION_DAYS, clock, deps.logger, partitions),
    ),
    new IdempotencyCleanupWorker(deps.queue, services.idempotency, deps.logger),
  ];

  return {
    cache,
    /** What authentication reads: the cache, or (cache off) the database, key and agent in one query. */
    credentials: config.READ_CACHE_ENABLED ? cache : credentials,
    /** The agent check of the services, also asked before a query's 400 (src/http/strict-query.ts). */
    agentAccess,
    lastUsed,
    metrics,
    modules,
    auditRecorder,
    idempotency: services.idempotency,
    workers: new Workers(backgroundWorkers),
    reads,
  };
}
