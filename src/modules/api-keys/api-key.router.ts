import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { ApiKeyService } from './api-key.service.js';

const keyParams = uuidParams('keyId');

export function apiKeyRouter(keys: ApiKeyService): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    res.json(await keys.list(authOf(req), req.query));
  });

  router.post('/', async (req, res) => {
    res.status(201).json(await keys.create(authOf(req), req.body));
  });

  router.get('/:keyId', async (req, res) => {
    const { keyId } = parse(keyParams, req.params);
    sendResource(req, res, await keys.get(authOf(req), keyId));
  });

  router.patch('/:keyId', async (req, res) => {
    const { keyId } = parse(keyParams, req.params);
    sendResource(req, res, await keys.update(authOf(req), keyId, req.body, writeConditions(req)));
  });

  router.post('/:keyId/rotate', async (req, res) => {
    const { keyId } = parse(keyParams, req.params);
    const created = await keys.rotate(authOf(req), keyId, req.body, writeConditions(req));
    // The ETag is the new key's, as its GET shows it (without the raw value).
    const { key: _raw, ...representation } = created;
    sendResource(req, res, created, { status: 201, representation });
  });

  router.delete('/:keyId', async (req, res) => {
    const { keyId } = parse(keyParams, req.params);
    await keys.delete(authOf(req), keyId, writeConditions(req));
    res.status(204).end();
  });

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function apiKeyResources(keys: ApiKeyService): Record<string, ResourceCheck> {
  return {
    '/v1/api-keys/{keyId}': resourceCheck(keyParams, (auth, p) => keys.get(auth, p.keyId)),
  };
}
