import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';
import type { KnowledgeBaseSourcesService } from './kb-files.service.js';
import { documentCollectionRoutes, documentItemRoutes, documentSourceRoutes } from './knowledge-base.router.js';

const documentParams = uuidParams('orgId', 'documentId');

/** Mounted at /v1/organization/:orgId/knowledge-base; dashboard token only (knowledge-base.module.ts). */
export function organizationKnowledgeBaseRouter(
  kb: OrganizationKnowledgeBaseService,
  sources: KnowledgeBaseSourcesService,
  maxFileBytes: number,
): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  // Both answer the document as GET does, with its grants.
  documentSourceRoutes(router, 'orgId', maxFileBytes, {
    upload: async (auth, orgId, receive) => {
      const { created, document } = await sources.uploadForOrganization(auth, orgId, receive);
      return { created, document: await kb.get(auth, orgId, document.id) };
    },
    webSource: async (auth, orgId, body) =>
      kb.get(auth, orgId, (await sources.createWebSourceForOrganization(auth, orgId, body)).id),
  });

  router.post('/:documentId/sync', async (req, res) => {
    const { orgId, documentId } = parse(documentParams, req.params);
    const auth = authOf(req);
    await sources.syncForOrganization(auth, orgId, documentId);
    sendResource(req, res, await kb.get(auth, orgId, documentId), { status: 202 });
  });

  documentCollectionRoutes(router, 'orgId', kb);
  documentItemRoutes(router, 'orgId', kb);

  route
    .put('/:documentId/grants', documentParams)
    .json((auth, { orgId, documentId }, req) => kb.replaceGrants(auth, orgId, documentId, req.body));

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function organizationKnowledgeBaseResources(
  kb: OrganizationKnowledgeBaseService,
): Record<string, ResourceCheck> {
  return {
    '/v1/organization/{orgId}/knowledge-base/{documentId}': resourceCheck(documentParams, (auth, p) =>
      kb.get(auth, p.orgId, p.documentId),
    ),
  };
}
