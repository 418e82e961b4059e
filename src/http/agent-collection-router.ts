import { Router } from 'express';
import type { WriteConditions } from '../api/entity-tag.js';
import { agentIdParams, uuidParams } from '../api/validate.js';
import type { AuthContext } from '../auth/auth-context.js';
import { writeConditions } from './entity-tag.js';
import { routesOf, type CheckedWrite } from './routes.js';
import { resourceCheck, type ResourceCheck } from './strict-query.js';

/** The service of a collection that belongs to an agent, whose creates and updates may be dry runs. */
export type AgentCollectionService = {
  list(auth: AuthContext, agentId: string, query: unknown): Promise<unknown>;
  create(auth: AuthContext, agentId: string, body: unknown, conditions: WriteConditions): Promise<CheckedWrite>;
  get(auth: AuthContext, agentId: string, id: string): Promise<unknown>;
  update(
    auth: AuthContext,
    agentId: string,
    id: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<CheckedWrite>;
  delete(auth: AuthContext, agentId: string, id: string, conditions: WriteConditions): Promise<void>;
};

/**
 * A router for an agent's collection with its list route (`GET /`, the service's JSON), and the
 * parser of an item's path parameters (`agentId` and `id`, each a UUID or 400 naming it).
 */
function listRouter(service: Pick<AgentCollectionService, 'list'>, id: string) {
  const router = Router({ mergeParams: true });
  const route = routesOf(router);
  route.get('/', agentIdParams).json((auth, { agentId }, req) => service.list(auth, agentId, req.query));
  const item = uuidParams('agentId', id).transform((p) => [p.agentId!, p[id]!] as const);
  return { router, route, item };
}

/**
 * The five routes of such a collection (contacts, employees, tools), mounted at
 * `/v1/agents/:agentId/<collection>` with `id` naming the item's path parameter: the list, and the
 * item with its ETag (`If-Match` on writes, `dry_run` on create and update).
 */
export function agentCollectionRouter(service: AgentCollectionService, id: string): Router {
  const { router, route, item } = listRouter(service, id);
  route
    .post('/', agentIdParams)
    .checkedWrite((auth, { agentId }, req, conditions) => service.create(auth, agentId, req.body, conditions), 201);
  route.get(`/:${id}`, item).resource((auth, [agentId, itemId]) => service.get(auth, agentId, itemId));
  route
    .patch(`/:${id}`, item)
    .checkedWrite((auth, [agentId, itemId], req, conditions) =>
      service.update(auth, agentId, itemId, req.body, conditions),
    );
  route
    .delete(`/:${id}`, item)
    .noContent((auth, [agentId, itemId], req) => service.delete(auth, agentId, itemId, writeConditions(req)));

  return router;
}

/** The service of a collection of an agent whose items carry no ETag (experiments, campaigns). */
export type AgentItemsService<Action extends string> = {
  list(auth: AuthContext, agentId: string, query: unknown): Promise<unknown>;
  create(auth: AuthContext, agentId: string, body: unknown): Promise<unknown>;
  get(auth: AuthContext, agentId: string, id: string): Promise<unknown>;
} & Record<Action, (auth: AuthContext, agentId: string, id: string) => Promise<unknown>>;

/**
 * The routes such a collection shares, mounted at `/v1/agents/:agentId/<collection>` with `id`
 * naming the item's path parameter: the list, the create (201), the item, and `POST /:id/<action>`
 * for each of `actions` (`start`, `pause`), each answering the service's JSON. The module adds its
 * other routes to the router returned.
 */
export function agentItemsRouter<Action extends string>(
  service: AgentItemsService<Action>,
  id: string,
  actions: readonly Action[],
): Router {
  const { router, route, item } = listRouter(service, id);
  route.post('/', agentIdParams).json((auth, { agentId }, req) => service.create(auth, agentId, req.body), 201);
  route.get(`/:${id}`, item).json((auth, [agentId, itemId]) => service.get(auth, agentId, itemId));
  for (const action of actions) {
    route.post(`/:${id}/${action}`, item).json((auth, [agentId, itemId]) => service[action](auth, agentId, itemId));
  }

  return router;
}

/**
 * The collection's item read, for the strict query check: a refused query string on an item that
 * does not exist answers that read's 404 (src/http/strict-query.ts).
 */
export function agentCollectionResources(
  service: Pick<AgentCollectionService, 'get'>,
  collection: string,
  id: string,
): Record<string, ResourceCheck> {
  const itemParams = uuidParams('agentId', id);
  return {
    [`/v1/agents/{agentId}/${collection}/{${id}}`]: resourceCheck(itemParams, (auth, p) => {
      const ids = p as Record<string, string>;
      return service.get(auth, ids.agentId!, ids[id]!);
    }),
  };
}
