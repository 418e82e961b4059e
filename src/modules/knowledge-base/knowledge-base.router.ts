import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { MethodNotAllowedError } from '../../errors/index.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import type { AuthContext } from '../../auth/auth-context.js';
import type { KnowledgeBaseService } from './knowledge-base.service.js';
import type { KnowledgeBaseSourcesService } from './kb-files.service.js';
import { receiveUpload } from './multipart-upload.js';

const agentParams = uuidParams('agentId');

/** The documents of one owner, an agent (`agentId`) or the organization (`orgId`), as both routers serve them. */
export type DocumentsService = {
  list(auth: AuthContext, ownerId: string, query: unknown): Promise<unknown>;
  create(auth: AuthContext, ownerId: string, body: unknown): Promise<unknown>;
  get(auth: AuthContext, ownerId: string, documentId: string): Promise<unknown>;
  update(
    auth: AuthContext,
    ownerId: string,
    documentId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<unknown>;
  delete(auth: AuthContext, ownerId: string, documentId: string, conditions: WriteConditions): Promise<void>;
};

/** `GET /` (a page) and `POST /` (201) of the owner's documents. */
export function documentCollectionRoutes(router: Router, owner: 'agentId' | 'orgId', kb: DocumentsService): void {
  const params = uuidParams(owner);
  const route = routesOf(router);
  route.get('/', params).json((auth, p, req) => kb.list(auth, p[owner], req.query));
  route.post('/', params).resource((auth, p, req) => kb.create(auth, p[owner], req.body), 201);
}

/** `GET`, `PATCH` and `DELETE /:documentId` of one of the owner's documents, with its ETag. */
export function documentItemRoutes(router: Router, owner: 'agentId' | 'orgId', kb: DocumentsService): void {
  const params = uuidParams(owner, 'documentId');
  const route = routesOf(router);
  route
    .get('/:documentId', params)
    .resource((auth, { [owner]: ownerId, documentId }) => kb.get(auth, ownerId, documentId));

  route
    .patch('/:documentId', params)
    .resource((auth, { [owner]: ownerId, documentId }, req) =>
      kb.update(auth, ownerId, documentId, req.body, writeConditions(req)),
    );

  route
    .delete('/:documentId', params)
    .noContent((auth, { [owner]: ownerId, documentId }, req) =>
      kb.delete(auth, ownerId, documentId, writeConditions(req)),
    );
}
/** How an owner's documents are added from a source: the stored document as the answer shows it. */
export type DocumentSources = {
  upload(
    auth: AuthContext,
    ownerId: string,
    receive: () => ReturnType<typeof receiveUpload>,
  ): Promise<{ created: boolean; document: unknown }>;
  webSource(auth: AuthContext, ownerId: string, body: unknown): Promise<unknown>;
};

/**
 * `POST /files` (202 with the new document, 200 with the one the same file made before) and
 * `POST /urls` (202) of the owner's documents; another method on either is 405.
 */
export function documentSourceRoutes(
  router: Router,
  owner: 'agentId' | 'orgId',
  maxFileBytes: number,
  sources: DocumentSources,
): void {
  const params = uuidParams(owner);
  // multipart/form-data, streamed: the JSON body parser leaves this operation alone (app.ts).
  router.post('/files', async (req, res) => {
    const { [owner]: ownerId } = parse(params, req.params);
    const { created, document } = await sources.upload(authOf(req), ownerId, () => receiveUpload(req, maxFileBytes));
    sendResource(req, res, document, { status: created ? 202 : 200 });
  });

  routesOf(router)
    .post('/urls', params)
    .resource((auth, { [owner]: ownerId }, req) => sources.webSource(auth, ownerId, req.body), 202);

  for (const path of ['/files', '/urls']) {
    router.all(path, (req) => {
      throw new MethodNotAllowedError(req.method, ['POST']);
    });
  }
}

const documentParams = uuidParams('agentId', 'documentId');

/** Mounted at /v1/agents/:agentId/knowledge-base. */
export function knowledgeBaseRouter(
  kb: KnowledgeBaseService,
  sources: KnowledgeBaseSourcesService,
  maxFileBytes: number,
): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);

  documentSourceRoutes(router, 'agentId', maxFileBytes, {
    upload: (auth, agentId, receive) => sources.uploadForAgent(auth, agentId, receive),
    webSource: (auth, agentId, body) => sources.createWebSourceForAgent(auth, agentId, body),
  });

  documentCollectionRoutes(router, 'agentId', kb);

  route.post('/search', agentParams).json((auth, { agentId }, req) => kb.search(auth, agentId, req.body));

  // "search" is not a document id: another method on it is 405, not a 400 about documentId.
  router.all('/search', (req) => {
    throw new MethodNotAllowedError(req.method, ['POST']);
  });

  documentItemRoutes(router, 'agentId', kb);

  route
    .post('/:documentId/sync', documentParams)
    .resource((auth, { agentId, documentId }) => sources.syncForAgent(auth, agentId, documentId), 202);

  route
    .get('/:documentId/chunks', documentParams)
    .json((auth, { agentId, documentId }, req) => kb.listChunks(auth, agentId, documentId, req.query));

  route
    .post('/:documentId/chunks', documentParams)
    .json((auth, { agentId, documentId }, req) => kb.createChunks(auth, agentId, documentId, req.body), 201);

  route
    .delete('/:documentId/chunks', documentParams)
    .noContent((auth, { agentId, documentId }, req) =>
      kb.deleteChunks(auth, agentId, documentId, writeConditions(req)),
    );

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function knowledgeBaseResources(kb: KnowledgeBaseService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/knowledge-base/{documentId}': resourceCheck(documentParams, (auth, p) =>
      kb.get(auth, p.agentId, p.documentId),
    ),
  };
}
