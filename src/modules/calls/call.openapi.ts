import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, PaginationQuerySchema, PaginationSchema, queryFlag, queryText } from '../../openapi/common.js';
import { agentOperations, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import { QUERY_PREFIXES } from '../../http/strict-query.js';
import { CallStatsSchema, STATS_INTERVALS } from './call-stats.schemas.js';
import { EXPORT_FORMATS, EXPORTS_PER_KEY } from './call-export.js';
import { CallListItemSchema, CallSchema, IntakeCallSchema, UpdateCallSchema } from './call.schemas.js';

const ListQuery = PaginationQuerySchema.extend({
  done: z.enum(['true', 'false']).optional(),
  from: queryText('Created at or after; ISO date-time, or a date (start of that UTC day)'),
  to: queryText('Created at or before; ISO date-time, or a date (the whole UTC day)'),
  phone_number: queryText('Caller number; spaces, dashes and brackets are ignored'),
  search: queryText('Case-insensitive text in name, number, request, summary, note or transcript'),
  include_deleted: queryFlag('Include calls in the trash (default false)'),
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

/** The `extracted.` family, declared on the operations that take it (checked in extracted-filters.ts). */
const EXTRACTED_QUERY_PREFIXES = ['extracted.'];

const statsQueryShape = {
  from: z
    .string()
    .openapi({ description: 'Required. As in the list: ISO date-time, or a date (start of that UTC day)' }),
  to: z
    .string()
    .openapi({ description: 'Required. As in the list: ISO date-time (inclusive), or a date (the whole UTC day)' }),
  interval: z
    .enum(STATS_INTERVALS)
    .optional()
    .openapi({ description: 'Bucket size (default day); weeks start on Monday' }),
  tz: z.string().optional().openapi({ description: 'IANA time zone of the buckets', example: 'Europe/Berlin' }),
  done: ListQuery.shape.done,
  phone_number: ListQuery.shape.phone_number,
  search: ListQuery.shape.search,
  include_deleted: ListQuery.shape.include_deleted,
};
const AgentStatsQuery = z.object({
  ...statsQueryShape,
  tz: statsQueryShape.tz.openapi({
    description: "IANA time zone of the buckets (default: the agent's schedule time zone, else UTC)",
  }),
  group_by: z.string().optional().openapi({
    description:
      'done, employee, direction (inbound, outbound), variant (the experiment variant, "none" without one), or extracted.<name> of an enum or boolean analysis field',
    example: 'extracted.urgency',
  }),
});
const OrganizationStatsQuery = z.object({
  ...statsQueryShape,
  tz: statsQueryShape.tz.openapi({ description: 'IANA time zone of the buckets (default UTC)' }),
  group_by: z.string().optional().openapi({
    description:
      'done, employee, direction (inbound, outbound), variant (the experiment variant, "none" without one) or agent',
  }),
});

const ExportQuery = z.object({
  format: z.enum(EXPORT_FORMATS).optional().openapi({ description: 'ndjson (default) or csv' }),
  done: ListQuery.shape.done,
  from: ListQuery.shape.from,
  to: ListQuery.shape.to,
  phone_number: ListQuery.shape.phone_number,
  search: ListQuery.shape.search,
  include_deleted: ListQuery.shape.include_deleted,
});

const base = '/v1/agents/{agentId}/calls';

export function registerCallPaths(registry: OpenAPIRegistry): void {
  const register = agentOperations(registry, 'Calls');
  register({
    method: 'get',
    path: base,
    operationId: 'listCalls',
    permission: 'calls:read',
    summary: 'List calls (calls:read), newest first; items without the transcript',
    description: EXTRACTED_FILTERS_DESCRIPTION,
    extensions: { [QUERY_PREFIXES]: EXTRACTED_QUERY_PREFIXES },
    request: { query: ListQuery },
    responses: { 200: json(CallPageSchema, 'A page of calls') },
  });
  register({
    method: 'post',
    path: base,
    operationId: 'reportCall',
    permission: 'calls:write',
    summary: 'Report a finished call (calls:write); idempotent on call_id; records call.completed',
    request: { body: jsonBody(IntakeCallSchema) },
    responses: {
      201: json(CallSchema, 'The new call'),
      200: json(CallSchema, 'The call stored earlier under this call_id; nothing recorded again'),
    },
  });
  register({
    method: 'get',
    path: `${base}/stats`,
    operationId: 'getCallStats',
    permission: 'calls:read',
    summary: "Call statistics per time bucket (calls:read), with the list's filters",
    description:
      'Counts, done counts and durations per hour, day, week or month in a time zone, empty buckets included; ' +
      "the bucket counts add up to totals.count, which equals the list's total for the same filters. " +
      EXTRACTED_FILTERS_DESCRIPTION,
    extensions: { [QUERY_PREFIXES]: EXTRACTED_QUERY_PREFIXES },
    request: { query: AgentStatsQuery },
    responses: { 200: json(CallStatsSchema, 'The statistics') },
  });
  register({
    method: 'get',
    path: `${base}/export`,
    operationId: 'exportCalls',
    permission: 'calls:read',
    summary: "Every call matching the list's filters as NDJSON or CSV, streamed (calls:read)",
    description:
      'NDJSON: one call per line, as in the list. CSV (RFC 4180, CRLF line ends): a header row, one column per ' +
      'call field, `extracted.<name>` per analysis field of the agent, the transcript as one JSON cell. A text ' +
      "cell that starts with `=`, `+`, `-`, `@`, tab or CR gets a leading `'` (no spreadsheet runs it as a " +
      'formula), and the phone_number cell always does (kept as text). Sent as ' +
      `an attachment; at most ${EXPORTS_PER_KEY} exports run at once per API key (429 beyond). ` +
      EXTRACTED_FILTERS_DESCRIPTION,
    extensions: { [QUERY_PREFIXES]: EXTRACTED_QUERY_PREFIXES },
    request: { query: ExportQuery },
    responses: {
      200: {
        description: 'The calls, newest first',
        headers: z.object({
          'Content-Disposition': z.string().openapi({ example: 'attachment; filename="calls.csv"' }),
        }),
        content: {
          'application/x-ndjson': {
            schema: z.string().openapi({ description: 'One CallListItem JSON object per line' }),
          },
          'text/csv': { schema: z.string().openapi({ description: 'RFC 4180 CSV with a header row' }) },
        },
      },
    },
  });
  register({
    method: 'get',
    path: '/v1/organization/{orgId}/calls/stats',
    operationId: 'getOrganizationCallStats',
    permission: 'calls:read',
    agentScope: 'filtered',
    summary: 'Call statistics of every agent of the organization the caller may read (calls:read)',
    request: { query: OrganizationStatsQuery },
    responses: { 200: json(CallStatsSchema, 'The statistics') },
  });
  const calls = resourceOperations(register, {
    path: base,
    permission: 'calls',
    operation: 'Call',
    schema: CallSchema,
  });
  calls.get({ summary: 'Get one call with its transcript (calls:read)' });
  calls.update({
    summary: 'Set done, note or employee_id (calls:write); other fields are ignored',
    body: UpdateCallSchema,
  });
}
