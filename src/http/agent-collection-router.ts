import { Router } from 'express';
import type { WriteConditions } from '../api/entity-tag.js';
import { agentIdParams, parse, uuidParams } from '../api/validate.js';
import type { AuthContext } from '../auth/auth-context.js';
import { sendResource, writeConditions } from './entity-tag.js';
import { authOf } from './request.js';

/** The service of a collection that belongs to an agent, whose creates and updates may be dry runs. */
export type AgentCollectionService = {
  list(auth: AuthContext, agentId: string, query: unknown): Promise<unknown>;
  create(auth: AuthContext, agentId: string, body: unknown, conditions: WriteConditions): Promise<unknown>;
  get(auth: AuthContext, agentId: string, id: string): Promise<unknown>;
  update(auth: AuthContext, agentId: string, id: string, body: unknown, conditions: WriteConditions): Promise<unknown>;
  delete(auth: AuthContext, agentId: string, id: string, conditions: WriteConditions): Promise<void>;
};

/**
 * The five routes of such a collection (contacts, employees, tools), mounted at
 * `/v1/agents/:agentId/<collection>` with `id` naming the item's path parameter: the list, and the
 * item with its ETag (`If-Match` on writes, `dry_run` on create and update).
 */
export function agentCollectionRouter(service: AgentCollectionService, id: string): Router {
  const router = Router({ mergeParams: true });
  const itemParams = uuidParams('agentId', id);
  const item = (params: unknown) => {
    const parsed = parse(itemParams, params) as Record<string, string>;
    return [parsed.agentId!, parsed[id]!] as const;
  };

  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await service.list(authOf(req), agentId, req.query));
  });

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const created = await service.create(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, created, { status: 201, dryRun: conditions.dryRun });
  });

  router.get(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    sendResource(req, res, await service.get(authOf(req), agentId, itemId));
  });

  router.patch(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    sendResource(req, res, await service.update(authOf(req), agentId, itemId, req.body, conditions), conditions);
  });

  router.delete(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    await service.delete(authOf(req), agentId, itemId, writeConditions(req));
    res.status(204).end();
  });

  return router;
}
