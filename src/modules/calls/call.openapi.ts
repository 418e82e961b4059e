import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  AGENT_ROUTE_ERRORS,
  anyAuth,
  errorResponses,
  json,
  jsonBody,
  PaginationQuerySchema,
  PaginationSchema,
} from '../../openapi/common.js';
import { z } from '../../openapi/zod.js';
import { CallListItemSchema, CallSchema, IntakeCallSchema, UpdateCallSchema } from './call.schemas.js';

const AgentParams = z.object({ agentId: z.uuid() });
const CallParams = z.object({ agentId: z.uuid(), callId: z.uuid() });
const ListQuery = PaginationQuerySchema.extend({
  done: z.enum(['true', 'false']).optional(),
  from: z
    .string()
    .optional()
    .openapi({ description: 'Created at or after; ISO date-time, or a date (start of that UTC day)' }),
  to: z
    .string()
    .optional()
    .openapi({ description: 'Created at or before; ISO date-time, or a date (the whole UTC day)' }),
  phone_number: z
    .string()
    .optional()
    .openapi({ description: 'Caller number; spaces, dashes and brackets are ignored' }),
  search: z
    .string()
    .optional()
    .openapi({ description: 'Case-insensitive text in name, number, request, summary, note or transcript' }),
  include_deleted: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ description: 'Include calls in the trash (default false)' }),
  cursor: z
    .string()
    .optional()
    .openapi({
      description:
        'Keyset paging instead of page: pass pagination.next_cursor of the previous page; empty starts at the newest call. ' +
        'Same order as page paging, and calls reported meanwhile never shift the next page. Not together with page (400).',
    }),
});

// Its own object, not PaginationSchema.extend(): extending a registered schema gives allOf
// [Pagination, ...], and Pagination's integer page would still forbid the null of cursor paging.
const CallsPaginationSchema = z
  .object({
    ...PaginationSchema.shape,
    page: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The page number; null when the page was fetched by cursor' }),
    next_cursor: z.string().nullable().openapi({
      description: 'Opaque; pass as cursor to get the page after this one. Null on the last page',
    }),
  })
  .openapi('CallsPagination');

/** The list response: the page schema with the calls pagination (cursor paging). */
export const CallPageSchema = z.object({ data: z.array(CallListItemSchema), pagination: CallsPaginationSchema });

/** The `extracted.<name>` parameters: their names depend on the agent, so the document describes them in words. */
export const EXTRACTED_FILTERS_DESCRIPTION =
  'Filter by typed outcomes with `extracted.<name>=<value>`, one per analysis field of the agent (enum value, ' +
  '`true`/`false`, number, date `YYYY-MM-DD` or exact string); number and date fields also take ' +
  '`extracted.<name>[gte]=` and `extracted.<name>[lte]=` (inclusive). They combine with every other filter; ' +
  'an unknown field or a value of the wrong type is 400 naming the parameter.';

const tags = ['Calls'];
const base = '/v1/agents/{agentId}/calls';
const errors = errorResponses(...AGENT_ROUTE_ERRORS);

export function registerCallPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: base,
    operationId: 'listCalls',
    tags,
    summary: 'List calls (calls:read), newest first; items without the transcript',
    description: EXTRACTED_FILTERS_DESCRIPTION,
    security: anyAuth,
    request: { params: AgentParams, query: ListQuery },
    responses: { 200: json(CallPageSchema, 'A page of calls'), ...errors },
  });
  registry.registerPath({
    method: 'post',
    path: base,
    operationId: 'reportCall',
    tags,
    summary: 'Report a finished call (calls:write); idempotent on call_id; records call.completed',
    security: anyAuth,
    request: { params: AgentParams, body: jsonBody(IntakeCallSchema) },
    responses: {
      201: json(CallSchema, 'The new call'),
      200: json(CallSchema, 'The call stored earlier under this call_id; nothing recorded again'),
      ...errors,
    },
  });
  registry.registerPath({
    method: 'get',
    path: `${base}/{callId}`,
    operationId: 'getCall',
    tags,
    summary: 'Get one call with its transcript (calls:read)',
    security: anyAuth,
    request: { params: CallParams },
    responses: { 200: json(CallSchema, 'The call'), ...errors },
  });
  registry.registerPath({
    method: 'patch',
    path: `${base}/{callId}`,
    operationId: 'updateCall',
    tags,
    summary: 'Set done, note or employee_id (calls:write); other fields are ignored',
    security: anyAuth,
    request: { params: CallParams, body: jsonBody(UpdateCallSchema) },
    responses: { 200: json(CallSchema, 'The updated call'), ...errors },
  });
}
