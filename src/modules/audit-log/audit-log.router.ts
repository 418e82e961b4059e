import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { AuditLogService } from './audit-log.service.js';

const orgIdParams = uuidParams('orgId');

/** Mounted at /organization/:orgId/audit-log. */
export function auditLogRouter(auditLog: AuditLogService): Router {
  const router = Router({ mergeParams: true });
  router.get('/', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    res.json(await auditLog.list(authOf(req), orgId, req.query));
  });
  return router;
}
