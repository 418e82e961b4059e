import type { Logger } from 'pino';
import { AuditLogRepository } from './audit/audit-log.repository.js';
import { AuditRecorder } from './audit/audit-recorder.js';
import { AuditedTransactions } from './audit/audited-transactions.js';
import type { TokenVerifier } from './auth/token.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import { EventRecorder } from './events/event-recorder.js';
import type { MountedModule } from './http/api-module.js';
import type { RateLimitStore } from './http/rate-limit-store.js';
import type { JobQueue } from './jobs/queue.js';
import { Workers } from './jobs/workers.js';
import { Metrics } from './metrics/metrics.js';
import { PartitionMaintenance } from './db/partitions.js';
import { ReadRouting } from './db/replicas.js';
import { AppError } from './errors/index.js';
import { PartitionWorker } from './jobs/partition.worker.js';
import { buildAgentVersionModule } from './modules/agent-versions/agent-version.module.js';
import { AgentVersionRecorder } from './modules/agent-versions/agent-version.recorder.js';
import { AgentVersionRepository } from './modules/agent-versions/agent-version.repository.js';
import { buildAgentModule, buildAgentReads } from './modules/agents/agent.module.js';
import { buildApiKeyModule } from './modules/api-keys/api-key.module.js';
import { buildAuditLogModule } from './modules/audit-log/audit-log.module.js';
import { buildCallModule, callsTodayCounter } from './modules/calls/call.module.js';
import { buildContactModule } from './modules/contacts/contact.module.js';
import { buildEmployeeModule } from './modules/employees/employee.module.js';
import { buildForwardingSlotModule } from './modules/forwarding-slots/forwarding-slot.module.js';
import { buildHealthModule } from './modules/health/health.module.js';
import { buildIdempotencyModule } from './modules/idempotency/idempotency.module.js';
import { buildKnowledgeBaseModule } from './modules/knowledge-base/knowledge-base.module.js';
import { buildMeModule } from './modules/me/me.module.js';
import type { BuiltModule, SharedDeps } from './modules/module.js';
import { buildBundleModule } from './modules/agent-bundles/bundle.module.js';
import { buildTemplateModule } from './modules/agent-templates/template.module.js';
import { buildExperimentModule } from './modules/experiments/experiment.module.js';
import { buildPhoneNumberModule } from './modules/phone-numbers/phone-number.module.js';
import { buildRuntimeModule } from './modules/runtime/route.module.js';
import { buildOutboundModule } from './modules/outbound/outbound.module.js';
import { buildOrganizationModule } from './modules/organizations/organization.module.js';
import { buildDataSubjectModule } from './modules/privacy/data-subject.module.js';
import { buildSimulationModule, buildTestCases } from './modules/simulation/simulation.module.js';
import { buildToolModule } from './modules/tools/tool.module.js';
import { buildWebhookModule } from './modules/webhooks/webhook.module.js';
import { buildWorkflowModule } from './modules/workflows/workflow.module.js';

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

/**
 * The wiring: the shared infrastructure once, then every module once. A module builds its own
 * repositories, services, routers and workers in `build<Name>Module(deps)` (its `<name>.module.ts`);
 * this file only hands each its dependencies. Tests take the same container (test/support).
 */
export function buildContainer(deps: AppDeps) {
  const { db, clock, config, logger, queue } = deps;

  const auditLog = new AuditLogRepository(db);
  // Streaming standbys for the heavy reads (DATABASE_REPLICA_URLS; main.ts starts and stops their checks).
  const reads = new ReadRouting(
    db,
    config.DATABASE_REPLICA_URLS,
    { maxLagMs: config.REPLICA_MAX_LAG_MS, poolMax: config.DATABASE_POOL_MAX },
    logger,
    (error) => error instanceof AppError,
  );
  // A client's own writes send its next reads to the primary for the lag bound.
  const auditRecorder = new AuditRecorder(auditLog, clock, logger, {
    writing: (auth, trx) => reads.noteWrite(auth, trx),
    wrote: (auth) => reads.wrote(auth),
  });
  // Monthly partitions of calls, events, deliveries and the audit log: made ahead, old months dropped.
  const partitions = new PartitionMaintenance(db, logger);
  const agentReads = buildAgentReads({ db, databaseUrl: deps.databaseUrl, config, clock, logger });
  // Writes made through other instances are heard on the cache's channel (read-your-writes).
  if (config.READ_CACHE_ENABLED) reads.hear(agentReads.cache);
  const callsToday = callsTodayCounter(db);
  const testCases = buildTestCases({ db, callsToday });
  const events = new EventRecorder(queue);
  const shared: SharedDeps = {
    config,
    clock,
    logger,
    db,
    audited: new AuditedTransactions(db, auditRecorder),
    auditLog,
    queue,
    events,
    cache: agentReads.cache,
    agentAccess: agentReads.access,
    versions: new AgentVersionRecorder(new AgentVersionRepository(db), events, clock),
    testCaseGuard: testCases.guard,
    metrics: new Metrics(db, queue, { rateLimitStore: deps.rateLimitStore }),
    reads,
  };

  // Modules other modules build on (their exports are passed on by name, typed).
  const knowledgeBase = buildKnowledgeBaseModule(shared);
  const bundles = buildBundleModule({ ...shared, agentReads, testCases, knowledgeBase });
  const templates = buildTemplateModule({ ...shared, bundles });
  const agents = buildAgentModule({ ...shared, agentReads, callsToday, templates: templates.service });
  const tools = buildToolModule({ ...shared, agentReads });
  const agentVersions = buildAgentVersionModule({ ...shared, agentReads, agents, tools });
  const outbound = buildOutboundModule(shared);
  const simulation = buildSimulationModule({ ...shared, testCases, agents, agentVersions });
  const experiments = buildExperimentModule({ ...shared, testCases, simulation });

  /** Every module once, in the order of the OpenAPI document; a new module is one line here. */
  const modules = {
    health: buildHealthModule(shared),
    apiKeys: buildApiKeyModule(shared),
    agents,
    workflows: buildWorkflowModule(shared),
    organizations: buildOrganizationModule(shared),
    webhooks: buildWebhookModule(shared),
    me: buildMeModule(shared),
    employees: buildEmployeeModule(shared),
    forwardingSlots: buildForwardingSlotModule(shared),
    tools,
    contacts: buildContactModule(shared),
    knowledgeBase,
    calls: buildCallModule({ ...shared, intakeHooks: { optOut: outbound.service.optOut } }),
    agentVersions,
    simulation,
    auditLog: buildAuditLogModule({ ...shared, partitions }),
    dataSubjects: buildDataSubjectModule(shared),
    idempotency: buildIdempotencyModule(shared),
    outbound,
    phoneNumbers: buildPhoneNumberModule(shared),
    runtime: buildRuntimeModule({ ...shared, testCases, experiments }),
    experiments,
    bundles,
    templates,
  } satisfies Record<string, BuiltModule>;
  const built: BuiltModule[] = Object.values(modules);

  return {
    shared,
    /** Each module's build output by name: tests drive its workers and processors (test/support/internals.ts). */
    built: modules,
    cache: agentReads.cache,
    /** What authentication reads: the cache, or (cache off) the database, key and agent in one query. */
    credentials: agentReads.credentials,
    /** The agent check of the services, also asked before a query's 400 (src/http/strict-query.ts). */
    agentAccess: agentReads.access,
    lastUsed: agentReads.lastUsed,
    metrics: shared.metrics,
    /** What src/app.ts mounts, with the OpenAPI registration of exactly those routes. */
    modules: built.flatMap((m): MountedModule[] => (m.module ? [m.module] : [])),
    auditRecorder,
    idempotency: modules.idempotency.service,
    /** Started by main.ts when WORKERS_ENABLED; tests drive them directly. */
    workers: new Workers([new PartitionWorker(queue, partitions, clock), ...built.flatMap((m) => m.workers ?? [])]),
    /** Where the heavy reads go (src/db/replicas.ts); main.ts starts and stops its health checks. */
    reads,
  };
}
