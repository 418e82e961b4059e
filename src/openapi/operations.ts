import type { OpenAPIRegistry, ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import {
  access,
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  noContent,
  paginated,
  type AgentScope,
  type DeclaredPermission,
} from './common.js';
import type { Permission } from '../auth/permissions.js';
import { z } from './zod.js';

/** What the operations of one module (one tag) share. */
export type OperationGroup = {
  tags: string[];
  /** `anyAuth` unless given. */
  security?: Record<string, string[]>[];
  agentScope: AgentScope;
  /** The error statuses of every operation of the group (`AGENT_ROUTE_ERRORS` for agent sub-resources). */
  errors: readonly number[];
};

/**
 * One operation: what a registerPath holds but the group's tags, security and error responses.
 * `request.params` is the path's parameters, each a UUID (`pathParams`), unless given.
 */
export type Operation = Pick<RouteConfig, 'method' | 'path' | 'operationId' | 'summary' | 'description' | 'request'> & {
  /** A permission, or several (`x-permissions`, see `access`). */
  permission: Parameters<typeof access>[0];
  /** The group's unless given: one operation of a group that reads across agents (`filtered`). */
  agentScope?: AgentScope;
  /** Extensions of this operation (`x-query-prefixes`), after its description. */
  extensions?: Record<`x-${string}`, unknown>;
  /** The success responses; the group's error responses are added. */
  responses: Record<number, ResponseConfig>;
  /** Error statuses of this operation beyond the group's (409, 413). */
  errors?: readonly number[];
};

/**
 * The registerPath of a module's operations: each gets its `access()` declaration (`x-permission`,
 * `x-agent-scope`), the group's tags and security, and the group's error responses plus its own.
 */
export function operationGroup(registry: OpenAPIRegistry, group: OperationGroup): (operation: Operation) => void {
  const { tags, security = anyAuth } = group;
  return ({
    method,
    path,
    operationId,
    permission,
    agentScope = group.agentScope,
    summary,
    description,
    extensions,
    request,
    responses,
    errors = [],
  }) =>
    registry.registerPath({
      method,
      path,
      operationId,
      ...access(permission, agentScope),
      tags,
      summary,
      ...(description === undefined ? {} : { description }),
      ...extensions,
      security,
      request: request?.params || !path.includes('{') ? request : { params: pathParams(path), ...request },
      responses: { ...responses, ...errorResponses(...group.errors, ...errors) },
    });
}

type Params = z.ZodObject<Record<string, z.ZodType>>;

/** The parameters of a path, every one a UUID (`/v1/agents/{agentId}/tools/{toolId}`). */
export function pathParams(path: string): Params {
  return z.object(Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, z.uuid()])));
}

/** The resources with a read and a write permission: `contacts` for `contacts:read` and `contacts:write`. */
type PermissionPrefix = {
  [K in Permission]: K extends `${infer P}:read` ? (`${P}:write` extends Permission ? P : never) : never;
}[Permission];

type Resource = {
  /** The collection; its items live at `{path}/{<noun>Id}`. */
  path: string;
  /** `contacts`: reads need `contacts:read`, writes `contacts:write`. */
  permission: PermissionPrefix;
  /**
   * `operation` names the operation ids (`listContacts`, `createContact`, `getContact`, ...), `noun`
   * the item's path parameter (`contactId`) and the response descriptions (`A page of contacts`,
   * `The new contact`); `plural` when the list is not the noun with an s.
   */
  names: { operation: string; noun: string; plural?: string };
  schema: z.ZodType;
};

type Summary = Pick<Operation, 'summary' | 'description' | 'errors'>;

/**
 * The standard operations of a collection (list, create, get, update, delete), each registered
 * when called, so a module keeps its own order and registers its other operations between them.
 */
export function resourceOperations(
  register: (operation: Operation) => void,
  { path, permission, names, schema }: Resource,
) {
  const read: DeclaredPermission = `${permission}:read`;
  const write: DeclaredPermission = `${permission}:write`;
  const { operation, noun, plural = `${noun}s` } = names;
  const itemPath = `${path}/{${noun}Id}`;
  const params = pathParams(path);
  const collection = Object.keys(params.shape).length > 0 ? { params } : {};
  const item = { params: pathParams(itemPath) };
  return {
    /**
     * `query` documents a paginated list (`page` its answer when that is not `paginated(schema)`:
     * cursor paging); without it the answer holds every item in `data`.
     */
    list: ({ query, page = paginated(schema), ...rest }: Summary & { query?: Params; page?: z.ZodType }) =>
      register({
        method: 'get',
        path,
        operationId: `list${operation}s`,
        permission: read,
        ...rest,
        request: query ? { ...collection, query } : collection,
        responses: {
          200: query ? json(page, `A page of ${plural}`) : json(z.object({ data: z.array(schema) }), `The ${plural}`),
        },
      }),
    create: ({ body, ...rest }: Summary & { body: z.ZodType }) =>
      register({
        method: 'post',
        path,
        operationId: `create${operation}`,
        permission: write,
        ...rest,
        request: { ...collection, body: jsonBody(body) },
        responses: { 201: json(schema, `The new ${noun}`) },
      }),
    get: (rest: Summary) =>
      register({
        method: 'get',
        path: itemPath,
        operationId: `get${operation}`,
        permission: read,
        ...rest,
        request: item,
        responses: { 200: json(schema, `The ${noun}`) },
      }),
    update: ({ body, ...rest }: Summary & { body: z.ZodType }) =>
      register({
        method: 'patch',
        path: itemPath,
        operationId: `update${operation}`,
        permission: write,
        ...rest,
        request: { ...item, body: jsonBody(body) },
        responses: { 200: json(schema, `The updated ${noun}`) },
      }),
    /** `POST {item}/{name}` (`startExperiment`), answered with the item as `response` describes it. */
    action: (name: string, { response, ...rest }: Summary & { response: string }) =>
      register({
        method: 'post',
        path: `${itemPath}/${name}`,
        operationId: `${name}${operation}`,
        permission: write,
        ...rest,
        request: item,
        responses: { 200: json(schema, response) },
      }),
    delete: (rest: Summary) =>
      register({
        method: 'delete',
        path: itemPath,
        operationId: `delete${operation}`,
        permission: write,
        ...rest,
        request: item,
        responses: { 204: noContent },
      }),
  };
}

/** The operations of an agent sub-resource: scope `agent`, any credential, `AGENT_ROUTE_ERRORS`. */
export function agentOperations(registry: OpenAPIRegistry, tag: string): (operation: Operation) => void {
  return operationGroup(registry, { tags: [tag], agentScope: 'agent', errors: AGENT_ROUTE_ERRORS });
}
