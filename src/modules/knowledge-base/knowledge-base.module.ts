import type { ApiModule } from '../../http/api-module.js';
import { registerKnowledgeBasePaths } from './knowledge-base.openapi.js';
import { knowledgeBaseRouter } from './knowledge-base.router.js';
import type { KnowledgeBaseService } from './knowledge-base.service.js';
import { organizationKnowledgeBaseRouter } from './organization-knowledge-base.router.js';
import type { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';
import type { KnowledgeBaseSourcesService } from './kb-files.service.js';

export const knowledgeBaseModule: ApiModule<
  [KnowledgeBaseService, OrganizationKnowledgeBaseService, KnowledgeBaseSourcesService, { maxFileBytes: number }]
> = {
  mounts: (kb, organizationKb, sources, { maxFileBytes }) => [
    { path: '/agents/:agentId/knowledge-base', router: knowledgeBaseRouter(kb, sources, maxFileBytes) },
    {
      path: '/organization/:orgId/knowledge-base',
      access: { tokenOnly: 'Organization knowledge base management' },
      router: organizationKnowledgeBaseRouter(organizationKb, sources, maxFileBytes),
    },
  ],
  openapi: registerKnowledgeBasePaths,
};
