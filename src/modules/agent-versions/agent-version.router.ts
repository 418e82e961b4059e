import { Router } from 'express';
import { routesOf } from '../../http/routes.js';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { writeConditions } from '../../http/entity-tag.js';
import { agentIdParams } from '../../api/validate.js';
import type { AgentVersionService } from './agent-version.service.js';
import { diffParams, versionParams } from './agent-version.schemas.js';

/** Mounted at /agents/:agentId/versions. */
export function agentVersionRouter(versions: AgentVersionService): Router {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.get('/', agentIdParams).json((auth, { agentId }, req) => versions.list(auth, agentId, req.query));
  route.get('/:version', versionParams).json((auth, { agentId, version }) => versions.get(auth, agentId, version));
  route
    .get('/:from/diff/:to', diffParams)
    .json((auth, { agentId, from, to }) => versions.diff(auth, agentId, from, to));
  route
    .post('/:version/restore', versionParams)
    .json((auth, { agentId, version }, req) => versions.restore(auth, agentId, version, writeConditions(req)), 201);
  return router;
}

/** The reads that answer 404 for a missing resource before a refused query string's 400. */
export function agentVersionResources(versions: AgentVersionService): Record<string, ResourceCheck> {
  return {
    '/v1/agents/{agentId}/versions/{version}': resourceCheck(versionParams, (auth, p) =>
      versions.get(auth, p.agentId, p.version),
    ),
    '/v1/agents/{agentId}/versions/{from}': resourceCheck(diffParams, (auth, p) =>
      versions.get(auth, p.agentId, p.from),
    ),
    '/v1/agents/{agentId}/versions/{from}/diff/{to}': resourceCheck(diffParams, (auth, p) =>
      versions.get(auth, p.agentId, p.to),
    ),
  };
}
