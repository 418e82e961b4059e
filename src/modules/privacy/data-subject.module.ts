import type { ApiModule } from '../../http/api-module.js';
import { registerDataSubjectPaths } from './data-subject.openapi.js';
import { dataSubjectEraseRouter, dataSubjectExportRouter } from './data-subject.router.js';
import type { DataSubjectService } from './data-subject.service.js';

export const dataSubjectModule: ApiModule<[DataSubjectService]> = {
  mounts: (subjects) => [
    {
      path: '/organization/:orgId/data-subjects/export',
      router: dataSubjectExportRouter(subjects),
      // The answer is the person's data: it must not be kept for replays.
      idempotencyKey: false,
    },
    { path: '/organization/:orgId/data-subjects/erase', router: dataSubjectEraseRouter(subjects) },
  ],
  openapi: registerDataSubjectPaths,
};
