import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';
import type { KnowledgeBaseSourcesService } from './kb-files.service.js';
import { receiveUpload } from './multipart-upload.js';
import { documentCollectionRoutes, documentItemRoutes } from './knowledge-base.router.js';
import { MethodNotAllowedError } from '../../errors/index.js';

const orgParams = uuidParams('orgId');
const documentParams = uuidParams('orgId', 'documentId');

/** Mounted at /v1/organization/:orgId/knowledge-base; dashboard token only (knowledge-base.module.ts). */
export function organizationKnowledgeBaseRouter(
  kb: OrganizationKnowledgeBaseService,
  sources: KnowledgeBaseSourcesService,
  maxFileBytes: number,
): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  // multipart/form-data, streamed: the JSON body parser leaves this operation alone (app.ts).
  router.post('/files', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    const auth = authOf(req);
    const { created, document } = await sources.uploadForOrganization(auth, orgId, () =>
      receiveUpload(req, maxFileBytes),
    );
    sendResource(req, res, await kb.get(auth, orgId, document.id), { status: created ? 202 : 200 });
  });

  router.post('/urls', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    const auth = authOf(req);
    const document = await sources.createWebSourceForOrganization(auth, orgId, req.body);
    sendResource(req, res, await kb.get(auth, orgId, document.id), { status: 202 });
  });

  for (const path of ['/files', '/urls']) {
    router.all(path, (req) => {
      throw new MethodNotAllowedError(req.method, ['POST']);
    });
  }

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
