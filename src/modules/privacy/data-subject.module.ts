import type { SharedDeps, BuiltModule } from '../module.js';
import { registerDataSubjectPaths } from './data-subject.openapi.js';
import { DataSubjectRepository } from './data-subject.repository.js';
import { dataSubjectEraseRouter, dataSubjectExportRouter } from './data-subject.router.js';
import { DataSubjectService } from './data-subject.service.js';

export function buildDataSubjectModule({ db, audited, events, clock }: SharedDeps): BuiltModule {
  // Erasure batches run on the plain handle: only the completing (audited) transaction writes the audit row.
  const subjects = new DataSubjectService(audited, db, new DataSubjectRepository(db), events, clock);
  return {
    module: {
      mounts: [
        {
          path: '/organization/:orgId/data-subjects/export',
          router: dataSubjectExportRouter(subjects),
          // The answer is the person's data: it must not be kept for replays.
          idempotencyKey: false,
        },
        { path: '/organization/:orgId/data-subjects/erase', router: dataSubjectEraseRouter(subjects) },
      ],
      openapi: registerDataSubjectPaths,
    },
  };
}
