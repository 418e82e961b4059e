import type { SharedDeps, BuiltModule } from '../module.js';
import { KnowledgeBaseIndexRepository } from './kb-index.repository.js';
import { KnowledgeBaseJobs, KnowledgeBaseProcessor, KnowledgeBaseWorker } from './kb.worker.js';
import { registerKnowledgeBasePaths } from './knowledge-base.openapi.js';
import { KnowledgeBaseRepository } from './knowledge-base.repository.js';
import { KnowledgeBaseSourcesService } from './kb-files.service.js';
import { WebSourceSync, webSourceOptionsFromConfig } from './web-source.js';
import { knowledgeBaseResources, knowledgeBaseRouter } from './knowledge-base.router.js';
import { KnowledgeBaseService } from './knowledge-base.service.js';
import {
  organizationKnowledgeBaseResources,
  organizationKnowledgeBaseRouter,
} from './organization-knowledge-base.router.js';
import { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';

/** Exports the job queue and the processor that tests drive directly. */
export function buildKnowledgeBaseModule(
  deps: SharedDeps,
): BuiltModule<{ jobs: KnowledgeBaseJobs; processor: KnowledgeBaseProcessor }> {
  const { db, audited, queue, clock, logger, agentAccess, events } = deps;
  const documents = new KnowledgeBaseRepository(db);
  const index = new KnowledgeBaseIndexRepository(db);
  const jobs = new KnowledgeBaseJobs(queue);
  // Background work: its transactions are plain ones (no request, no audit row).
  const web = new WebSourceSync(db, jobs, clock, logger, { ...webSourceOptionsFromConfig(deps.config), events });
  const processor = new KnowledgeBaseProcessor(db, index, jobs, clock, logger, {
    events,
    maxPdfPages: deps.config.KB_MAX_PDF_PAGES,
    web,
  });
  const kb = new KnowledgeBaseService(audited, documents, index, jobs, agentAccess, clock);
  const organizationKb = new OrganizationKnowledgeBaseService(audited, documents, jobs, clock);
  const sources = new KnowledgeBaseSourcesService(audited, documents, jobs, agentAccess, clock, {
    allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  });
  const maxFileBytes = deps.config.KB_MAX_FILE_BYTES;
  return {
    module: {
      mounts: [
        {
          path: '/agents/:agentId/knowledge-base',
          router: knowledgeBaseRouter(kb, sources, maxFileBytes),
          resources: knowledgeBaseResources(kb),
        },
        {
          path: '/organization/:orgId/knowledge-base',
          access: { tokenOnly: 'Organization knowledge base management' },
          router: organizationKnowledgeBaseRouter(organizationKb, sources, maxFileBytes),
          resources: organizationKnowledgeBaseResources(organizationKb),
        },
      ],
      openapi: registerKnowledgeBasePaths,
    },
    workers: [new KnowledgeBaseWorker(queue, processor)],
    jobs,
    processor,
  };
}
