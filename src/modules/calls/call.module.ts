import type { Db } from '../../db/knex.js';
import type { CallsTodayCounter } from '../agents/greeting-preview.service.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { ExportSlotRepository } from './call-export-slots.repository.js';
import { CallExportService } from './call-export.service.js';
import { CallRetention, CallRetentionWorker } from './call-retention.worker.js';
import { CallStatsRepository } from './call-stats.repository.js';
import { CallStatsService } from './call-stats.service.js';
import { registerCallPaths } from './call.openapi.js';
import { CallRepository } from './call.repository.js';
import { callResources, callRouter, organizationCallRouter } from './call.router.js';
import { CallService, type CallIntakeHooks } from './call.service.js';

/**
 * Today's calls of a caller to an agent: the greeting preview and the call simulator (and through
 * it the test-case guard) choose greeting variants with it.
 */
export function callsTodayCounter(db: Db): CallsTodayCounter {
  const calls = new CallRepository(db);
  return (q) =>
    calls.countCallsToday({ id: q.agentId, organization_id: q.organizationId }, q.phoneNumber, q.since, q.until);
}

/** Exports the repository and the retention that tests drive directly. */
export function buildCallModule(
  deps: SharedDeps & { intakeHooks?: CallIntakeHooks },
): BuiltModule<{ repository: CallRepository; retention: CallRetention }> {
  const { db, audited, events, agentAccess, clock, logger, queue } = deps;
  const repository = new CallRepository(db);
  const retention = new CallRetention(repository, clock, logger);
  const calls = new CallService(audited, repository, events, agentAccess, clock, deps.intakeHooks, deps.reads);
  const stats = new CallStatsService(new CallStatsRepository(db), agentAccess, deps.reads);
  const exporter = new CallExportService(repository, new ExportSlotRepository(db), agentAccess, clock, deps.reads);
  return {
    module: {
      mounts: [
        { path: '/agents/:agentId/calls', router: callRouter(calls, stats, exporter), resources: callResources(calls) },
        { path: '/organization/:orgId/calls', router: organizationCallRouter(stats) },
      ],
      openapi: registerCallPaths,
    },
    workers: [new CallRetentionWorker(queue, retention, clock)],
    repository,
    retention,
  };
}
