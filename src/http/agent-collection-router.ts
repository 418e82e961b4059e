import { Router } from 'express';
import type { WriteConditions } from '../api/entity-tag.js';
import { agentIdParams, parse, uuidParams } from '../api/validate.js';
import type { AuthContext } from '../auth/auth-context.js';
import { sendResource, writeConditions } from './entity-tag.js';
import { authOf } from './request.js';
import { resourceCheck, type ResourceCheck } from './strict-query.js';

/** A write checked against the agent's test cases: the resource and, on a dry run, the cases it fails. */
type CheckedWrite = { resource: unknown; failingTestCases: readonly string[] };

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
  router.get('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.json(await service.list(authOf(req), agentId, req.query));
  });
  const itemParams = uuidParams('agentId', id);
  const item = (params: unknown) => {
    const parsed = parse(itemParams, params) as Record<string, string>;
    return [parsed.agentId!, parsed[id]!] as const;
  };
  return { router, item };
}

/**
 * The five routes of such a collection (contacts, employees, tools), mounted at
 * `/v1/agents/:agentId/<collection>` with `id` naming the item's path parameter: the list, and the
 * item with its ETag (`If-Match` on writes, `dry_run` on create and update).
 */
export function agentCollectionRouter(service: AgentCollectionService, id: string): Router {
  const { router, item } = listRouter(service, id);

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await service.create(authOf(req), agentId, req.body, conditions);
    sendResource(req, res, resource, { status: 201, dryRun: conditions.dryRun, failingTestCases });
  });

  router.get(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    sendResource(req, res, await service.get(authOf(req), agentId, itemId));
  });

  router.patch(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    const conditions = writeConditions(req, { dryRunnable: true });
    const { resource, failingTestCases } = await service.update(authOf(req), agentId, itemId, req.body, conditions);
    sendResource(req, res, resource, { dryRun: conditions.dryRun, failingTestCases });
  });

  router.delete(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    await service.delete(authOf(req), agentId, itemId, writeConditions(req));
    res.status(204).end();
  });

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
  const { router, item } = listRouter(service, id);

  router.post('/', async (req, res) => {
    const { agentId } = parse(agentIdParams, req.params);
    res.status(201).json(await service.create(authOf(req), agentId, req.body));
  });

  router.get(`/:${id}`, async (req, res) => {
    const [agentId, itemId] = item(req.params);
    res.json(await service.get(authOf(req), agentId, itemId));
  });

  for (const action of actions) {
    router.post(`/:${id}/${action}`, async (req, res) => {
      const [agentId, itemId] = item(req.params);
      res.json(await service[action](authOf(req), agentId, itemId));
    });
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
