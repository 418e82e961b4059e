import { Router } from 'express';
import { authOf } from '../../http/request.js';
import { sendStreamed } from '../../http/streamed-body.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { DataSubjectService } from './data-subject.service.js';

const orgIdParams = uuidParams('orgId');

/** `/organization/:orgId/data-subjects/export`: never kept for Idempotency-Key replays (it holds the person's data). */
export function dataSubjectExportRouter(subjects: DataSubjectService): Router {
  const router = Router({ mergeParams: true });
  router.post('/', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    const body = await subjects.export(authOf(req), orgId, req.body);
    await sendStreamed(res, body, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  });
  return router;
}

export function dataSubjectEraseRouter(subjects: DataSubjectService): Router {
  const router = Router({ mergeParams: true });
  router.post('/', async (req, res) => {
    const { orgId } = parse(orgIdParams, req.params);
    const result = await subjects.erase(authOf(req), orgId, req.body);
    // A dry run changed nothing: the audit log does not record it.
    if (result.dry_run) res.set('Dry-Run', 'true');
    res.json(result);
  });
  return router;
}
