/**
 * The MCP tools, one per operation of the OpenAPI document: pure functions from the document (the
 * same one /v1/openapi.json serves, built from the routes' zod schemas) to tool definitions, and from
 * a tool call's arguments back to the HTTP request it stands for.
 */

import { isPermission } from '../../auth/permissions.js';
import { operationPermission } from '../../openapi/operation-permission.js';

/**
 * Operations whose answer carries a secret (an assistant's transcript is no place for one), and the
 * calls export, a stream of up to millions of calls that a tool result would hold in memory whole,
 * and the file uploads (multipart/form-data: a tool's JSON arguments carry no file).
 */
export const EXCLUDED_OPERATIONS: readonly string[] = [
  'createApiKey',
  'rotateApiKey',
  'getWebhookSecret',
  'rotateWebhookSecret',
  'exportCalls',
  'uploadKnowledgeBaseFile',
  'uploadOrganizationKnowledgeBaseFile',
];

type Json = Record<string, unknown>;
type JsonSchema = Json;

type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
  description?: string;
};

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
};

/** The parts of an OpenAPI 3.1 document the tools are made from. */
export type ToolSourceDocument = {
  paths?: Record<string, Record<string, unknown> | undefined>;
  components?: { schemas?: Record<string, unknown>; parameters?: Record<string, unknown> };
};

export type ToolAnnotations = {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

export type McpTool = {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  method: string;
  /** OpenAPI spelling: `/v1/agents/{agentId}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Header parameters as arguments: `idempotency_key` for `Idempotency-Key`. */
  headerParams: { argument: string; header: string }[];
  /** `flat`: the body's fields are arguments themselves; `nested`: the body is the `body` argument. */
  body: 'none' | 'flat' | 'nested';
  /** No credentials needed; or only a dashboard token (no API key). */
  access: 'public' | 'any' | 'tokenOnly';
  /** The permission the operation declares (`x-permission: agents:write`); undefined for a role or public one. */
  permission?: string;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `#/components/schemas/X` (and parameters) replaced by what they point at, so each schema stands alone. */
function inline(schema: unknown, document: ToolSourceDocument, seen: readonly string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, document, seen));
  if (typeof schema !== 'object' || schema === null) return schema;
  const { $ref, ...rest } = schema as Json;
  const own = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value, document, seen)]));
  if (typeof $ref !== 'string') return own;
  const [, , kind, name] = $ref.split('/');
  if (!kind || !name) return own;
  // A schema that contains itself stops at the second visit: an open object, described.
  if (seen.includes($ref)) return { type: 'object', description: `${name} (nested)`, ...own };
  const target = (document.components as Record<string, Record<string, unknown> | undefined> | undefined)?.[kind]?.[
    name
  ];
  return { ...(inline(target, document, [...seen, $ref]) as Json), ...own };
}

function isPlainObjectSchema(schema: JsonSchema): boolean {
  return (
    schema.type === 'object' &&
    typeof schema.properties === 'object' &&
    schema.properties !== null &&
    !('oneOf' in schema) &&
    !('anyOf' in schema) &&
    !('allOf' in schema)
  );
}

function accessOf(security: Record<string, string[]>[] | undefined): McpTool['access'] {
  if (!security || security.length === 0) return 'public';
  return security.some((requirement) => 'ApiKeyAuth' in requirement) ? 'any' : 'tokenOnly';
}

type SchemaParts = { properties: Record<string, unknown>; required: string[]; additionalProperties: unknown };

/** Path, query and header parameters as arguments (a header in snake case: `idempotency_key`). */
function addParameters(tool: McpTool, operation: Operation, document: ToolSourceDocument, parts: SchemaParts): void {
  for (const raw of operation.parameters ?? []) {
    const parameter = inline(raw, document) as Parameter;
    if (parameter.in === 'cookie') continue;
    const argument = parameter.in === 'header' ? parameter.name.toLowerCase().replace(/-/g, '_') : parameter.name;
    if (parameter.in === 'path') tool.pathParams.push(argument);
    else if (parameter.in === 'query') tool.queryParams.push(argument);
    else tool.headerParams.push({ argument, header: parameter.name });
    const description = parameter.description ?? (parameter.schema?.description as string | undefined);
    parts.properties[argument] = { ...parameter.schema, ...(description ? { description } : {}) };
    if (parameter.required || parameter.in === 'path') parts.required.push(argument);
  }
}

/**
 * The JSON body: its fields as arguments beside the parameters when it is a plain object whose field
 * names clash with none of them, otherwise the one argument `body`.
 */
function addBody(tool: McpTool, operation: Operation, document: ToolSourceDocument, parts: SchemaParts): void {
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  if (!bodySchema) return;
  const body = inline(bodySchema, document) as JsonSchema;
  const fields = isPlainObjectSchema(body) ? Object.keys(body.properties as Json) : [];
  if (fields.length > 0 && !fields.some((field) => field in parts.properties)) {
    tool.body = 'flat';
    Object.assign(parts.properties, body.properties);
    parts.required.push(...((body.required as string[] | undefined) ?? []));
    parts.additionalProperties = body.additionalProperties ?? true;
  } else {
    tool.body = 'nested';
    parts.properties.body = body;
    if (operation.requestBody?.required) parts.required.push('body');
  }
}

/** One tool from one operation, or undefined for an operation without an operationId. */
function toolFrom(
  path: string,
  method: string,
  operation: Operation,
  document: ToolSourceDocument,
): McpTool | undefined {
  const name = operation.operationId;
  if (!name) return undefined;
  const declared = operationPermission(operation);
  const permission = declared !== undefined && isPermission(declared) ? declared : undefined;
  // A POST that needs only a read permission (a greeting preview, a knowledge-base search) reads.
  const readOnly = method === 'get' || permission?.endsWith(':read') === true;
  const tool: McpTool = {
    name,
    description: [operation.summary, operation.description].filter(Boolean).join('\n\n') || name,
    inputSchema: { type: 'object' },
    annotations: {
      title: operation.summary,
      readOnlyHint: readOnly,
      destructiveHint: method === 'delete' || method === 'put',
      idempotentHint: readOnly || method === 'put' || method === 'delete',
      openWorldHint: false,
    },
    method,
    path,
    pathParams: [],
    queryParams: [],
    headerParams: [],
    body: 'none',
    access: accessOf(operation.security),
    permission,
  };
  const parts: SchemaParts = { properties: {}, required: [], additionalProperties: false };
  addParameters(tool, operation, document, parts);
  addBody(tool, operation, document, parts);
  const { properties, required, additionalProperties } = parts;
  tool.inputSchema = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties };
  return tool;
}

/** Every operation of the document as a tool, except the secret-returning ones. */
export function toolsFromDocument(served: object): McpTool[] {
  const document = served as ToolSourceDocument;
  const tools: McpTool[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method] as Operation | undefined;
      if (!operation) continue;
      const tool = toolFrom(path, method, operation, document);
      if (tool && !EXCLUDED_OPERATIONS.includes(tool.name)) tools.push(tool);
    }
  }
  return tools;
}

/** What decides which tools a caller is shown. */
export type ToolCaller = {
  kind: 'api_key' | 'token';
  /** Every permission the caller holds in some organization; undefined when not known (stdio). */
  permissions?: ReadonlySet<string>;
};

/**
 * The tools a caller may call: `MCP_TOOLS=read` keeps the read tools only, and so does a caller
 * whose permissions are all `:read`; an API key never sees a token-only operation; a tool whose
 * summary names a permission the caller lacks is left out.
 */
export function visibleTools(tools: readonly McpTool[], caller: ToolCaller, setting: 'read' | 'all'): McpTool[] {
  const held = caller.permissions;
  const readOnly = setting === 'read' || (held !== undefined && [...held].every((p) => p.endsWith(':read')));
  return tools.filter((tool) => {
    if (readOnly && !tool.annotations.readOnlyHint) return false;
    if (caller.kind === 'api_key' && tool.access === 'tokenOnly') return false;
    if (held && tool.permission && !held.has(tool.permission)) return false;
    return true;
  });
}

/** The HTTP request a tool call stands for. */
export type ApiRequest = {
  method: string;
  /** Path and query string, e.g. `/v1/agents/4f...?page=2`. */
  target: string;
  headers: Record<string, string>;
  body?: unknown;
};

function queryValue(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * The request for `tool` called with `args`; a missing path parameter, or one that is a dot segment
 * (which the URL would resolve into another path), is an error message instead.
 */
export function requestFor(tool: McpTool, args: Record<string, unknown>): ApiRequest | { invalid: string } {
  const rest: Record<string, unknown> = { ...args };
  let path = tool.path;
  for (const name of tool.pathParams) {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || value === '') return { invalid: `the argument ${name} is required` };
    const segment = encodeURIComponent(queryValue(value));
    if (segment === '.' || segment === '..') return { invalid: `the argument ${name} is not a valid path segment` };
    path = path.replace(`{${name}}`, segment);
  }
  const query = new URLSearchParams();
  for (const name of tool.queryParams) {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, queryValue(item));
  }
  const headers: Record<string, string> = {};
  for (const { argument, header } of tool.headerParams) {
    const value = rest[argument];
    delete rest[argument];
    if (value !== undefined && value !== null) headers[header] = queryValue(value);
  }
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const request: ApiRequest = { method: tool.method.toUpperCase(), target: `${path}${search}`, headers };
  // Unknown arguments go into the body: the API's own validation names them.
  if (tool.body === 'flat') request.body = rest;
  else if (tool.body === 'nested') request.body = rest.body ?? {};
  return request;
}
