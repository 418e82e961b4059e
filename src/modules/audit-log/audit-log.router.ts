import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { uuidParams } from '../../api/validate.js';
import type { AuditLogService } from './audit-log.service.js';

const orgIdParams = uuidParams('orgId');

/** Mounted at /organization/:orgId/audit-log. */
export function auditLogRouter(auditLog: AuditLogService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.get('/', orgIdParams).json((auth, { orgId }, req) => auditLog.list(auth, orgId, req.query));
  return router;
}
