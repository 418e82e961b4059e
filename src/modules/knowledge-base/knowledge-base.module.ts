import type { ApiModule } from '../../http/api-module.js';
import { registerKnowledgeBasePaths } from './knowledge-base.openapi.js';
import { knowledgeBaseResources, knowledgeBaseRouter } from './knowledge-base.router.js';
import type { KnowledgeBaseService } from './knowledge-base.service.js';
import {
  organizationKnowledgeBaseResources,
  organizationKnowledgeBaseRouter,
} from './organization-knowledge-base.router.js';
import type { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';

export const knowledgeBaseModule: ApiModule<[KnowledgeBaseService, OrganizationKnowledgeBaseService]> = {
  mounts: (kb, organizationKb) => [
    { path: '/agents/:agentId/knowledge-base', router: knowledgeBaseRouter(kb), resources: knowledgeBaseResources(kb) },
    {
      path: '/organization/:orgId/knowledge-base',
      access: { tokenOnly: 'Organization knowledge base management' },
      router: organizationKnowledgeBaseRouter(organizationKb),
      resources: organizationKnowledgeBaseResources(organizationKb),
    },
  ],
  openapi: registerKnowledgeBasePaths,
};
