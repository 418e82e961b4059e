import type { PartitionMaintenance } from '../../db/partitions.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { registerAuditLogPaths } from './audit-log.openapi.js';
import { auditLogRouter } from './audit-log.router.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditRetention, AuditRetentionWorker } from './audit-retention.worker.js';

/** Exports the retention that tests drive directly. */
export function buildAuditLogModule(
  deps: SharedDeps & { partitions: PartitionMaintenance },
): BuiltModule<{ retention: AuditRetention }> {
  const { auditLog, config, clock, logger, queue } = deps;
  const retention = new AuditRetention(auditLog, config.AUDIT_RETENTION_DAYS, clock, logger, deps.partitions);
  return {
    module: {
      mounts: [
        { path: '/organization/:orgId/audit-log', router: auditLogRouter(new AuditLogService(auditLog, deps.reads)) },
      ],
      openapi: registerAuditLogPaths,
    },
    workers: [new AuditRetentionWorker(queue, retention)],
    retention,
  };
}
