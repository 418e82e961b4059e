import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { sendResource, writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { parse, uuidParams } from '../../api/validate.js';
import type { ApiKeyService } from './api-key.service.js';

const keyParams = uuidParams('keyId');

export function apiKeyRouter(keys: ApiKeyService): Router {
  const router = Router();
  const route = routesOf(router);

  route.get('/').json((auth, _, req) => keys.list(auth, req.query));

  route.post('/').json((auth, _, req) => keys.create(auth, req.body), 201);

  route.get('/:keyId', keyParams).resource((auth, { keyId }) => keys.get(auth, keyId));

  route
    .patch('/:keyId', keyParams)
    .resource((auth, { keyId }, req) => keys.update(auth, keyId, req.body, writeConditions(req)));

  router.post('/:keyId/rotate', async (req, res) => {
    const { keyId } = parse(keyParams, req.params);
    const created = await keys.rotate(authOf(req), keyId, req.body, writeConditions(req));
    // The ETag is the new key's, as its GET shows it (without the raw value).
    const { key: _raw, ...representation } = created;
    sendResource(req, res, created, { status: 201, representation });
  });

  route
    .delete('/:keyId', keyParams)
    .noContent((auth, { keyId }, req) => keys.delete(auth, keyId, writeConditions(req)));

  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function apiKeyResources(keys: ApiKeyService): Record<string, ResourceCheck> {
  return {
    '/v1/api-keys/{keyId}': resourceCheck(keyParams, (auth, p) => keys.get(auth, p.keyId)),
  };
}
