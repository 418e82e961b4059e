import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { OrganizationKnowledgeBaseService } from './organization-knowledge-base.service.js';

const orgParams = uuidParams('orgId');
const documentParams = uuidParams('orgId', 'documentId');

/** Mounted at /v1/organization/:orgId/knowledge-base; dashboard token only (knowledge-base.module.ts). */
export function organizationKnowledgeBaseRouter(kb: OrganizationKnowledgeBaseService): Router {
  const router = Router({ mergeParams: true });

  router.get('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    res.json(await kb.list(authOf(req), orgId, req.query));
  });

  router.post('/', async (req, res) => {
    const { orgId } = parse(orgParams, req.params);
    sendResource(req, res, await kb.create(authOf(req), orgId, req.body), { status: 201 });
  });

  router.get('/:documentId', async (req, res) => {
    const { orgId, documentId } = parse(documentParams, req.params);
    sendResource(req, res, await kb.get(authOf(req), orgId, documentId));
  });

  router.patch('/:documentId', async (req, res) => {
    const { orgId, documentId } = parse(documentParams, req.params);
    sendResource(req, res, await kb.update(authOf(req), orgId, documentId, req.body, writeConditions(req)));
  });

  router.delete('/:documentId', async (req, res) => {
    const { orgId, documentId } = parse(documentParams, req.params);
    await kb.delete(authOf(req), orgId, documentId, writeConditions(req));
    res.status(204).end();
  });

  router.put('/:documentId/grants', async (req, res) => {
    const { orgId, documentId } = parse(documentParams, req.params);
    res.json(await kb.replaceGrants(authOf(req), orgId, documentId, req.body));
  });

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
