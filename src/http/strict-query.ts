import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ZodType } from 'zod';
import { parse } from '../api/validate.js';
import { assertEveryAgent, assertPermission, type AuthContext } from '../auth/auth-context.js';
import { isPermission, type Permission } from '../auth/permissions.js';
import { ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../errors/index.js';
import type { OpenApiDocument } from '../openapi/document.js';
import { operationPermission } from '../openapi/operation-permission.js';

/**
 * The one query parameter every operation accepts besides its declared ones: `_`, the cache buster
 * that jQuery's `cache: false` and many HTTP clients append.
 */
export const ALWAYS_ACCEPTED = '_';

/**
 * The operation extension naming families of query parameters whose names depend on the data, such
 * as `extracted.<name>` (one per analysis field of the agent): a parameter starting with one of the
 * listed prefixes is the operation's own, checked by its service.
 */
export const QUERY_PREFIXES = 'x-query-prefixes';

/** What one operation of the document accepts in its query string, computed once at startup. */
export type QueryRule = {
  /** Declared names in document order, then the prefix families (`extracted.<name>`), for messages. */
  accepted: readonly string[];
  names: ReadonlySet<string>;
  /** Declared as arrays: the only parameters that may be given more than once. */
  arrays: ReadonlySet<string>;
  prefixes: readonly string[];
  /** No credentials: the 400 needs no access check before it. */
  isPublic: boolean;
  /** Only a dashboard token may call it: an API key gets the mount's own 401 first. */
  tokenOnly: boolean;
  permission: Permission | undefined;
  /** Declared `developer_admin`: that dashboard role (in the path's organization, if it has one). */
  roleRequired: boolean;
  /** Declared `x-agent-scope: unrestricted`: refused to a key restricted to certain agents. */
  everyAgent: boolean;
  /** Index of the `{agentId}` / `{orgId}` segment in the path, if the path has one. */
  agentSegment: number | undefined;
  orgSegment: number | undefined;
  /**
   * The path's other resources, outermost first (`/v1/agents/{agentId}/calls/{callId}` has one): each
   * the template up to that parameter, which the resource's module checks (ResourceChecks).
   */
  resources: readonly string[];
};

type Parameter = { $ref?: string; name?: string; in?: string; schema?: { type?: unknown } };
type Operation = {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  'x-permission'?: unknown;
  'x-agent-scope'?: unknown;
  [QUERY_PREFIXES]?: string[];
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function ruleOf(path: string, operation: Operation, document: OpenApiDocument): QueryRule {
  const shared = (document.components?.parameters ?? {}) as Record<string, Parameter>;
  const query = (operation.parameters ?? [])
    .map((p) => (p.$ref ? shared[p.$ref.split('/').pop()!] : p))
    .filter((p): p is Parameter & { name: string } => p?.in === 'query' && typeof p.name === 'string');
  const prefixes = operation[QUERY_PREFIXES] ?? [];
  const segments = path.split('/');
  const segment = (name: string) => {
    const index = segments.indexOf(`{${name}}`);
    return index === -1 ? undefined : index;
  };
  const security = operation.security ?? [];
  const permission = operationPermission(operation);
  return {
    accepted: [...query.map((p) => p.name), ...prefixes.map((prefix) => `${prefix}<name>`)],
    names: new Set(query.map((p) => p.name)),
    arrays: new Set(query.filter((p) => p.schema?.type === 'array').map((p) => p.name)),
    prefixes,
    isPublic: security.length === 0,
    tokenOnly: security.length > 0 && security.every((requirement) => !('ApiKeyAuth' in requirement)),
    permission: permission !== undefined && isPermission(permission) ? permission : undefined,
    roleRequired: permission === 'developer_admin',
    everyAgent: operation['x-agent-scope'] === 'unrestricted',
    agentSegment: segment('agentId'),
    orgSegment: segment('orgId'),
    resources: segments.flatMap((part, i) =>
      /^\{\w+\}$/.test(part) && part !== '{agentId}' && part !== '{orgId}' ? [segments.slice(0, i + 1).join('/')] : [],
    ),
  };
}

export type QueryRules = (method: string, template: string) => QueryRule | undefined;

/** Every operation's rule, keyed by path template and method, so that a request looks its rule up once. */
export function queryRules(document: OpenApiDocument): QueryRules {
  // By path, then method: a lookup builds no string.
  const byPath = new Map<string, Map<string, QueryRule>>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const byMethod = new Map<string, QueryRule>();
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (operation) byMethod.set(method.toUpperCase(), ruleOf(path, operation, document));
    }
    byPath.set(path, byMethod);
  }
  return (method, template) => byPath.get(template)?.get(method === 'HEAD' ? 'GET' : method);
}

/** Levenshtein distance, for the suggestion only (names are short). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The declared name the client probably meant: one a typo away (`donee` -> `done`, `limt` -> `limit`;
 * up to two edits from six characters on), the same in another case, or one that the given name begins
 * (`phone` -> `phone_number`) or that begins it (`searchterm` -> `search`).
 */
export function suggestParameter(name: string, declared: Iterable<string>): string | undefined {
  const given = name.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const candidate of declared) {
    const lower = candidate.toLowerCase();
    const edits = distance(given, lower);
    const close = edits <= (Math.min(given.length, lower.length) >= 6 ? 2 : 1);
    const prefix = given.length >= 3 && (lower.startsWith(given) || given.startsWith(lower));
    if (!close && !prefix) continue;
    const score = close ? edits : 3;
    if (!best || score < best.score) best = { name: candidate, score };
  }
  return best?.name;
}

function unknownMessage(name: string, rule: QueryRule): string {
  const suggestion = suggestParameter(name, rule.names);
  const hint = suggestion ? ` Did you mean ${suggestion}?` : '';
  const accepted =
    rule.accepted.length > 0
      ? ` This operation accepts: ${rule.accepted.join(', ')}.`
      : ' This operation takes no query parameters.';
  return `Unknown query parameter.${hint}${accepted}`;
}

/**
 * One detail per parameter the operation does not declare (its name as `field`) and per declared
 * non-array parameter given more than once. `query` is Express' parsed query (the simple parser:
 * a repeated name is an array, `a[b]` stays a name of its own).
 */
export function queryProblems(rule: QueryRule, query: Record<string, unknown>): readonly ErrorDetail[] {
  // Allocates nothing for a query that passes, which is every request of a working client.
  let details: ErrorDetail[] | undefined;
  for (const name in query) {
    if (name === ALWAYS_ACCEPTED) continue;
    if (!rule.names.has(name)) {
      // A family's parameters are the service's to check, repetition included.
      if (!rule.prefixes.some((prefix) => name.startsWith(prefix))) {
        (details ??= []).push({ field: name, message: unknownMessage(name, rule) });
      }
    } else if (Array.isArray(query[name]) && !rule.arrays.has(name)) {
      (details ??= []).push({ field: name, message: 'Given more than once; send it once' });
    }
  }
  return details ?? NONE;
}

const NONE: readonly ErrorDetail[] = Object.freeze([]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the services use to check an agent of the path (AgentAccess). */
export type AgentResolver = { resolve(auth: AuthContext, agentId: string, permission: Permission): Promise<unknown> };

/**
 * How a module answers whether a resource of a path exists for the caller: the resource's own read
 * (the service's `get`), given the path's parameters by name. Only its NotFoundError counts: any
 * other answer (a 403 for a key that may write but not read it, a 400 for a malformed id) leaves the
 * query's 400 standing. Keyed by the template up to the resource's parameter
 * (`/v1/agents/{agentId}/calls/{callId}`); asked only for a request whose query is refused.
 */
export type ResourceCheck = (auth: AuthContext, params: Readonly<Record<string, string>>) => Promise<unknown>;
export type ResourceChecks = ReadonlyMap<string, ResourceCheck>;

/** A resource check from the route's own parameter schema and the resource's read. */
export function resourceCheck<P>(
  params: ZodType<P>,
  read: (auth: AuthContext, params: P) => Promise<unknown>,
): ResourceCheck {
  return (auth, raw) => read(auth, parse(params, raw));
}

/** The path's parameters by name (`{callId}` -> the segment at its place), decoded. */
function pathParams(template: string, path: string): Record<string, string> {
  const names = template.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    if (name.startsWith('{') && values[i] !== undefined) params[name.slice(1, -1)] = safeDecode(values[i]);
  });
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Throws the 404 of the first resource of the path that its module does not find. */
async function assertResourcesExist(
  auth: AuthContext,
  rule: QueryRule,
  template: string,
  path: string,
  checks: ResourceChecks,
): Promise<void> {
  if (rule.resources.length === 0) return;
  const params = pathParams(template, path);
  for (const resource of rule.resources) {
    const check = checks.get(resource);
    if (!check) continue;
    try {
      await check(auth, params);
    } catch (error) {
      if (error instanceof NotFoundError) throw error;
      return;
    }
  }
}

/**
 * Throws what the operation's service would answer first for a caller who may not call it: 403 for
 * a missing permission, 404 for an agent or organization of the path that does not exist or is out
 * of reach, 403 AGENT_NOT_ACCESSIBLE outside a key's agents. Asks the same checks the services make
 * (AgentAccess.resolve, assertPermission), with the permission the document declares.
 */
async function assertMayCall(auth: AuthContext, rule: QueryRule, path: string, agents: AgentResolver): Promise<void> {
  const segments = path.split('/');
  const agentId = rule.agentSegment === undefined ? undefined : segments[rule.agentSegment];
  const orgId = rule.orgSegment === undefined ? undefined : segments[rule.orgSegment];
  // A malformed id is the route's own 400; this one is a 400 too.
  if (agentId !== undefined) {
    if (rule.permission && UUID.test(agentId)) await agents.resolve(auth, agentId.toLowerCase(), rule.permission);
    return;
  }
  if (rule.permission) assertPermission(auth, rule.permission);
  if (rule.roleRequired && ![...auth.roles.values()].includes('developer_admin'))
    throw new ForbiddenError(ROLE_REQUIRED);
  if (orgId !== undefined && UUID.test(orgId)) {
    const id = orgId.toLowerCase();
    if (!auth.organizations.has(id)) throw new NotFoundError('Organization');
    if (rule.permission) assertPermission(auth, rule.permission, id);
    if (rule.roleRequired && auth.roles.get(id) !== 'developer_admin') throw new ForbiddenError(ROLE_REQUIRED);
  }
  if (rule.everyAgent) assertEveryAgent(auth);
}

const ROLE_REQUIRED = 'This operation requires the developer_admin role';

/**
 * Refuses a query parameter the matched operation does not declare in the OpenAPI document, and a
 * repeated one, with 400 VALIDATION_ERROR naming each. After authentication; a caller who may not
 * call the operation gets its 401/403/404 first, as the service would give it, and a path whose
 * resource does not exist its 404 (`resources`, from the modules). Requests without a
 * query string pass at the cost of one `indexOf`.
 */
export function strictQuery(
  rules: QueryRules,
  agents: AgentResolver,
  resources: ResourceChecks = new Map(),
): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    if (mark === -1 || req.routeTemplate === undefined) return next();
    const rule = rules(req.method, req.routeTemplate.path);
    if (!rule) return next();
    const details = queryProblems(rule, req.query as Record<string, unknown>);
    if (details.length === 0) return next();
    const refused = new ValidationError('Invalid query parameters', [...details]);
    if (rule.isPublic || !req.auth) return next(refused);
    // The mount's dashboard-token guard answers an API key with its own 401.
    if (rule.tokenOnly && req.auth.kind !== 'token') return next();
    const auth = req.auth;
    const template = req.routeTemplate.path;
    const path = url.slice(0, mark);
    assertMayCall(auth, rule, path, agents)
      .then(() => assertResourcesExist(auth, rule, template, path, resources))
      .then(() => next(refused), next);
  };
}
