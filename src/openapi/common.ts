import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { Permission } from '../auth/permissions.js';
import { ERROR_CODES } from '../errors/app-error.js';
import { z } from './zod.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      details: z
        .array(
          z.object({
            field: z.string(),
            message: z.string(),
            agent_id: z
              .uuid()
              .optional()
              .openapi({ description: 'TEST_CASES_FAILED: the agent of the failing test case' }),
            case_id: z.uuid().optional().openapi({ description: 'TEST_CASES_FAILED: the failing test case' }),
            case_name: z.string().optional(),
            expected: z.unknown().optional(),
            actual: z.unknown().optional(),
          }),
        )
        .optional(),
      request_id: z.string(),
    }),
  })
  .openapi('Error');

/** The path parameters of a route under an agent, and under an organization. */
export const AgentIdParams = z.object({ agentId: z.uuid() });
export const OrgIdParams = z.object({ orgId: z.uuid() });

export const PaginationSchema = z
  .object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), pages: z.number().int() })
  .openapi('Pagination');

/** The documented `page` and `limit` query parameters (src/api/pagination.ts validates them). */
export const paginationQueryDocShape = {
  page: z
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .openapi({ description: 'Page number, 1..1000000', default: 1, example: 1 }),
  limit: z.int().min(1).max(100).optional().openapi({ description: 'Items per page', default: 20, example: 20 }),
};

export const PaginationQuerySchema = z.object(paginationQueryDocShape);

export function paginated<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination: PaginationSchema });
}

/** The pagination of a list that pages by cursor as well as by page (`page` null for a cursor's page). */
export const CursorPaginationSchema = z
  .object({
    page: z.int().nullable(),
    limit: z.int(),
    total: z.int(),
    pages: z.int(),
    next_cursor: z.string().nullable(),
  })
  .openapi('CursorPagination');

/** A page of a list that pages by cursor, registered as `name` (`OutboundCallPage`). */
export function cursorPaginated<T extends z.ZodType>(item: T, name: string) {
  return z.object({ data: z.array(item), pagination: CursorPaginationSchema }).openapi(name);
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_ERROR: invalid parameters or body; `details` lists every problem',
  401: 'UNAUTHORIZED: missing, invalid, inactive, expired or deleted credentials',
  403:
    'FORBIDDEN (missing permission), AGENT_NOT_ACCESSIBLE (agent outside the key scope) or IP_NOT_ALLOWED ' +
    '(an API key used from outside its allowed_ips)',
  404: 'NOT_FOUND',
  409: 'CONFLICT (TEST_CASES_FAILED when a write would make a required test case of the agent fail)',
  413: 'VALIDATION_ERROR: request body larger than the limit',
  415: 'UNSUPPORTED_MEDIA_TYPE: the content is of a type the operation does not take; the message names what was found',
  429: 'RATE_LIMITED: see Retry-After',
  503: 'SERVICE_UNAVAILABLE: the database is unavailable; retry after Retry-After seconds',
};

/** The error responses of a route, all in the one envelope. */
export function errorResponses(...statuses: number[]): Record<number, ResponseConfig> {
  return Object.fromEntries(
    statuses.map((s) => [
      s,
      {
        description: ERROR_DESCRIPTIONS[s] ?? 'Error',
        content: { 'application/json': { schema: ErrorEnvelopeSchema } },
      },
    ]),
  );
}

export function json<T extends z.ZodType>(schema: T, description: string): ResponseConfig {
  return { description, content: { 'application/json': { schema } } };
}

/** A required JSON body; `media` adds to its media type (`example`, `examples`). */
export function jsonBody<T extends z.ZodType>(
  schema: T,
  media: { example?: unknown; examples?: Record<string, { summary: string; value: unknown }> } = {},
) {
  return { content: { 'application/json': { schema, ...media } }, required: true };
}

export const noContent: ResponseConfig = { description: 'No content' };

/** Both credentials work on /v1 routes; /v1/api-keys takes the dashboard token only. */
export const anyAuth: Record<string, string[]>[] = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
export const tokenOnly: Record<string, string[]>[] = [{ BearerAuth: [] }];

/** The standard errors of an agent-scoped route. */
export const AGENT_ROUTE_ERRORS = [400, 401, 403, 404, 429] as const;

/**
 * What a caller must hold, as `x-permission`: a permission (checked in the organization the
 * operation acts in), `developer_admin` (that dashboard role, token only), `signed_in` (any valid
 * dashboard token, about the caller), or `public` (no credentials).
 */
export type DeclaredPermission = Permission | 'developer_admin' | 'signed_in' | 'public';

/**
 * How a key's `allowed_agent_ids` applies, as `x-agent-scope`: `agent` (the path's agent must be in
 * it, else 403 AGENT_NOT_ACCESSIBLE), `filtered` (an answer about several agents holds only those),
 * `unrestricted` (refused to a restricted key with 403: the answer or change concerns every agent),
 * `none` (nothing agent-specific: organization settings, token-only and public operations).
 */
export type AgentScope = 'agent' | 'filtered' | 'unrestricted' | 'none';

/**
 * The access every operation declares, spread into its registerPath (`...access('agents:read',
 * 'agent')`); the permission-matrix test derives each operation's expected answers from it and
 * fails on an operation without it.
 */
export function access(
  permission: DeclaredPermission | readonly [Permission, ...Permission[]],
  agentScope: AgentScope = 'none',
): { 'x-permission': DeclaredPermission; 'x-permissions'?: Permission[]; 'x-agent-scope': AgentScope } {
  // Several permissions (an agent's bundle holds several resources): `x-permission` is the first,
  // the one the agent check asks for, and `x-permissions` lists all of them; a caller needs every one.
  if (typeof permission !== 'string')
    return { 'x-permission': permission[0], 'x-permissions': [...permission], 'x-agent-scope': agentScope };
  return { 'x-permission': permission, 'x-agent-scope': agentScope };
}

/** An optional query parameter, any text, as its description says. */
export const queryText = (description: string) => z.string().optional().openapi({ description });

/** An optional `true`/`false` query parameter, as its description says. */
export const queryFlag = (description: string) => z.enum(['true', 'false']).optional().openapi({ description });
