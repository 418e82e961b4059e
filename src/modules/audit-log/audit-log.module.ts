import type { ApiModule } from '../../http/api-module.js';
import { registerAuditLogPaths } from './audit-log.openapi.js';
import { auditLogRouter } from './audit-log.router.js';
import type { AuditLogService } from './audit-log.service.js';

export const auditLogModule: ApiModule<[AuditLogService]> = {
  mounts: (auditLog) => [{ path: '/organization/:orgId/audit-log', router: auditLogRouter(auditLog) }],
  openapi: registerAuditLogPaths,
};
