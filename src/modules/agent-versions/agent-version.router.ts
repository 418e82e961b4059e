import { Router } from 'express';
import { resourceCheck, type ResourceCheck } from '../../http/strict-query.js';
import { writeConditions } from '../../http/entity-tag.js';
import { authOf } from '../../http/request.js';
import { agentIdParams, parse } from '../../api/validate.js';
import type { AgentVersionService } from './agent-version.service.js';
import { diffParams, versionParams } from './agent-version.schemas.js';

/** Mounted at /agents/:agentId/versions. */
export function agentVersionRouter(versions: AgentVersionService): Router {
  const router = Router({ mergeParams: true });
  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await versions.list(authOf(req), agentId, req.query));
  });
  router.get('/:version', async (req, res) => {
    const { agentId, version } = parse(versionParams, req.params);
    res.json(await versions.get(authOf(req), agentId, version));
  });
  router.get('/:from/diff/:to', async (req, res) => {
    const { agentId, from, to } = parse(diffParams, req.params);
    res.json(await versions.diff(authOf(req), agentId, from, to));
  });
  router.post('/:version/restore', async (req, res) => {
    const { agentId, version } = parse(versionParams, req.params);
    res.status(201).json(await versions.restore(authOf(req), agentId, version, writeConditions(req)));
  });
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
