import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { MethodNotAllowedError } from '../../errors/index.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { KnowledgeBaseService } from './knowledge-base.service.js';
import type { KnowledgeBaseSourcesService } from './kb-files.service.js';
import { receiveUpload } from './multipart-upload.js';

const agentParams = uuidParams('agentId');
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

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await kb.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    sendResource(req, res, await kb.create(authOf(req), agentId, req.body), { status: 201 });
  });

  router.post('/search', async (req, res) => {
    const { agentId } = parse(agentParams, req.params);
    res.json(await kb.search(authOf(req), agentId, req.body));
  });

  // "search" is not a document id: another method on it is 405, not a 400 about documentId.
  router.all('/search', (req) => {
    throw new MethodNotAllowedError(req.method, ['POST']);
  });

  router.get('/:documentId', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    sendResource(req, res, await kb.get(authOf(req), agentId, documentId));
  });

  router.patch('/:documentId', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    sendResource(req, res, await kb.update(authOf(req), agentId, documentId, req.body, writeConditions(req)));
  });

  router.delete('/:documentId', async (req, res) => {
    const { agentId, documentId } = parse(documentParams, req.params);
    await kb.delete(authOf(req), agentId, documentId, writeConditions(req));
    res.status(204).end();
  });

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
