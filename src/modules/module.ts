import type { ReadRouting } from '../db/replicas.js';
import type { Logger } from 'pino';
import type { AuditedTransactions } from '../audit/audited-transactions.js';
import type { AuditLogRepository } from '../audit/audit-log.repository.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/knex.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { MountedModule } from '../http/api-module.js';
import type { JobQueue } from '../jobs/queue.js';
import type { BackgroundWorker } from '../jobs/workers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AgentAccess } from './agents/agent-access.js';
import type { AgentChangeGuard } from './agents/agent-change-guard.js';
import type { AgentRow } from './agents/agent.repository.js';
import type { AgentVersionRecorder } from './agent-versions/agent-version.recorder.js';

/**
 * The shared infrastructure every module's build function receives (src/container.ts builds it
 * once). A module takes what it uses from it and builds its own repositories, services, routers
 * and workers; what it needs from another module comes as a further, typed argument.
 */
export type SharedDeps = {
  config: Config;
  clock: Clock;
  logger: Logger;
  /**
   * The plain database handle: repositories are built over it (and run inside a service's
   * transaction through `with(trx)`); background workers open their transactions on it.
   */
  db: Db;
  /** The transactions of request writes: each commits together with the request's audit row. */
  audited: AuditedTransactions;
  /** The audit log's rows: read by the audit-log module, written by `audited`. */
  auditLog: AuditLogRepository;
  queue: JobQueue;
  /** The outbox of events that webhooks deliver (recorded inside a write's transaction). */
  events: EventRecorder;
  /** The read cache of keys, memberships and agents (`sync()` after a credential change). */
  cache: ReadCache<AgentRow>;
  /** Permission, agent scope and the agent row: the first line of every agent service method. */
  agentAccess: AgentAccess;
  /** Records a configuration version inside the write that changed it. */
  versions: AgentVersionRecorder;
  /** `require_passing_test_cases`, checked inside every write that changes what a call does. */
  testCaseGuard: AgentChangeGuard;
  metrics: Metrics;
  /**
   * Where the heavy reads (lists of calls, audit entries and deliveries, statistics, exports) go: a
   * healthy read replica, or the primary (src/db/replicas.ts).
   */
  reads: ReadRouting;
};

/**
 * What a module's `build<Name>Module(deps)` returns: its routes and their OpenAPI registration
 * (`module`; left out by a module without routes), the background workers main.ts starts
 * (`workers`; left out by a module without any; tests drive the same objects), and, beside them,
 * whatever it exports to other modules or to the tests (`{ module, workers, service }`).
 * src/container.ts lists every built module once.
 */
export type BuiltModule<Exports extends object = object> = {
  module?: MountedModule;
  workers?: BackgroundWorker[];
} & Exports;
