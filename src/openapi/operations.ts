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
import { isPermission, type Permission } from '../auth/permissions.js';
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

export type Resource = {
  /** The collection; its items live at `{path}/{<param>}`. */
  path: string;
  /** `contacts`: reads need `contacts:read`, writes `contacts:write`; one permission when both need it. */
  permission: PermissionPrefix | DeclaredPermission;
  /** Names the operation ids: `listContacts`, `createContact`, `getContact`, ... */
  operation: string;
  /** The item in the response descriptions (`The new contact`): the operation in lower case unless given. */
  noun?: string;
  /** The list's description (`A page of contacts`): the noun with an s unless given. */
  plural?: string;
  /** The item's path parameter: the noun with `Id` (`contactId`) unless given. */
  param?: string;
  schema: z.ZodType;
};

/** What a call adds to a standard operation; `response` replaces the description of its answer. */
type Summary = Pick<Operation, 'summary' | 'description' | 'errors' | 'agentScope'> & { response?: string };

function permissionsOf(permission: Resource['permission']): { read: DeclaredPermission; write: DeclaredPermission } {
  const read = `${permission}:read`;
  const write = `${permission}:write`;
  return isPermission(read) && isPermission(write)
    ? { read, write }
    : { read: permission as DeclaredPermission, write: permission as DeclaredPermission };
}

/**
 * The standard operations of a collection (list, create, get, update, delete), each registered
 * when called, so a module keeps its own order and registers its other operations between them.
 */
export function resourceOperations(register: (operation: Operation) => void, resource: Resource) {
  const { path, operation, schema } = resource;
  const { read, write } = permissionsOf(resource.permission);
  const noun = resource.noun ?? operation.toLowerCase();
  const { plural = `${noun}s`, param = `${noun}Id` } = resource;
  const itemPath = `${path}/{${param}}`;
  const params = pathParams(path);
  const collection = Object.keys(params.shape).length > 0 ? { params } : {};
  const item = { params: pathParams(itemPath) };
  return {
    /**
     * `query` documents a paginated list (`page` its answer when that is not `paginated(schema)`:
     * cursor paging); without it the answer holds every item in `data`.
     */
    list: ({ query, page = paginated(schema), response, ...rest }: Summary & { query?: Params; page?: z.ZodType }) =>
      register({
        method: 'get',
        path,
        operationId: `list${operation}s`,
        permission: read,
        ...rest,
        request: query ? { ...collection, query } : collection,
        responses: {
          200: query
            ? json(page, response ?? `A page of ${plural}`)
            : json(z.object({ data: z.array(schema) }), response ?? `The ${plural}`),
        },
      }),
    create: ({ body, response = `The new ${noun}`, ...rest }: Summary & { body: z.ZodType }) =>
      register({
        method: 'post',
        path,
        operationId: `create${operation}`,
        permission: write,
        ...rest,
        request: { ...collection, body: jsonBody(body) },
        responses: { 201: json(schema, response) },
      }),
    get: ({ response = `The ${noun}`, ...rest }: Summary) =>
      register({
        method: 'get',
        path: itemPath,
        operationId: `get${operation}`,
        permission: read,
        ...rest,
        request: item,
        responses: { 200: json(schema, response) },
      }),
    update: ({ body, response = `The updated ${noun}`, ...rest }: Summary & { body: z.ZodType }) =>
      register({
        method: 'patch',
        path: itemPath,
        operationId: `update${operation}`,
        permission: write,
        ...rest,
        request: { ...item, body: jsonBody(body) },
        responses: { 200: json(schema, response) },
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
