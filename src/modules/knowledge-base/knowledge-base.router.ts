import { Router } from 'express';
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
  router.get('/', async (req, res) => {
    const ownerId = parse(params, req.params)[owner];
    res.json(await kb.list(authOf(req), ownerId, req.query));
  });

  router.post('/', async (req, res) => {
    const ownerId = parse(params, req.params)[owner];
    sendResource(req, res, await kb.create(authOf(req), ownerId, req.body), { status: 201 });
  });
}

/** `GET`, `PATCH` and `DELETE /:documentId` of one of the owner's documents, with its ETag. */
export function documentItemRoutes(router: Router, owner: 'agentId' | 'orgId', kb: DocumentsService): void {
  const params = uuidParams(owner, 'documentId');
  router.get('/:documentId', async (req, res) => {
    const { [owner]: ownerId, documentId } = parse(params, req.params);
    sendResource(req, res, await kb.get(authOf(req), ownerId, documentId));
  });

  router.patch('/:documentId', async (req, res) => {
    const { [owner]: ownerId, documentId } = parse(params, req.params);
    sendResource(req, res, await kb.update(authOf(req), ownerId, documentId, req.body, writeConditions(req)));
  });

  router.delete('/:documentId', async (req, res) => {
    const { [owner]: ownerId, documentId } = parse(params, req.params);
    await kb.delete(authOf(req), ownerId, documentId, writeConditions(req));
    res.status(204).end();
  });
}
const documentParams = uuidParams('agentId', 'documentId');

/** Mounted at /v1/agents/:agentId/knowledge-base. */
export function knowledgeBaseRouter(
  kb: KnowledgeBaseService,
  sources: KnowledgeBaseSourcesService,
  maxFileBytes: number,
): Router {
  const router = Router({ mergeParams: true });

  // multipart/form-data, streamed: the JSON body parser leaves this operation alone (app.ts).
  router.post('/files', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    const { created, document } = await sources.uploadForAgent(authOf(req), agentId, () =>
      receiveUpload(req, maxFileBytes),
    );
    sendResource(req, res, document, { status: created ? 202 : 200 });
  });

  router.post('/urls', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    sendResource(req, res, await sources.createWebSourceForAgent(authOf(req), agentId, req.body), { status: 202 });
  });

  for (const path of ['/files', '/urls']) {
    router.all(path, (req) => {
      throw new MethodNotAllowedError(req.method, ['POST']);
    });
  }

  documentCollectionRoutes(router, 'agentId', kb);

  router.post('/search', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await kb.search(authOf(req), agentId, req.body));
  });

  // "search" is not a document id: another method on it is 405, not a 400 about documentId.
  router.all('/search', (req) => {
    throw new MethodNotAllowedError(req.method, ['POST']);
  });

  documentItemRoutes(router, 'agentId', kb);

  router.post('/:documentId/sync', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    sendResource(req, res, await sources.syncForAgent(authOf(req), agentId, documentId), { status: 202 });
  });

  router.get('/:documentId/chunks', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    res.json(await kb.listChunks(authOf(req), agentId, documentId, req.query));
  });

  router.post('/:documentId/chunks', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    res.status(201).json(await kb.createChunks(authOf(req), agentId, documentId, req.body));
  });

  router.delete('/:documentId/chunks', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    await kb.deleteChunks(authOf(req), agentId, documentId, writeConditions(req));
    res.status(204).end();
  });

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
