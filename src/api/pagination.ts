import type { Knex } from 'knex';
import { z } from 'zod';
import { ValidationError } from '../errors/index.js';

const positiveInt = (name: string, max?: number) =>
  z
    .string({ message: `${name} must be an integer` })
    .regex(/^\d+$/, `${name} must be an integer`)
    .transform(Number)
    .refine(
      (n) => n >= 1 && (max === undefined || n <= max),
      max ? `${name} must be between 1 and ${max}` : `${name} must be at least 1`,
    );

/**
 * The highest page asked for. With `limit` at most 100 the offset stays below 10^8, far inside
 * PostgreSQL's bigint and JavaScript's safe integers; a larger page is 400 naming `page`, never a
 * wrapped offset or a database error. A page past the last row is still 200 with `data: []`.
 */
export const MAX_PAGE = 1_000_000;
export const MAX_LIMIT = 100;

/** The one pagination schema: strict, no silent clamping. Spread into list query schemas. */
export const paginationShape = {
  page: positiveInt('page', MAX_PAGE).default(1),
  limit: positiveInt('limit', MAX_LIMIT).default(20),
};

export const paginationQuery = z.object(paginationShape);

export type PageParams = { page: number; limit: number };
export type Pagination = PageParams & { total: number; pages: number };
export type Page<T> = { data: T[]; pagination: Pagination };

/**
 * Runs the count and the page of `query` side by side. `orderBy` must end in a unique column
 * (usually `id`) so that pages never repeat or skip a row.
 */
export async function paginate<Row, T = Row>(
  query: Knex.QueryBuilder,
  params: PageParams,
  orderBy: { column: string; order: 'asc' | 'desc' }[],
  // eslint-disable-next-line no-restricted-syntax -- identity default: a caller without `map` has Row = T
  map: (row: Row) => T = (row) => row as unknown as T,
): Promise<Page<T>> {
  const [countRow, rows] = await Promise.all([
    query.clone().clearSelect().clearOrder().count({ total: '*' }).first(),
    query
      .clone()
      .orderBy(orderBy)
      .limit(params.limit)
      .offset((params.page - 1) * params.limit),
  ]);
  const total = Number((countRow as { total?: number } | undefined)?.total ?? 0);
  return {
    data: (rows as Row[]).map(map),
    pagination: { page: params.page, limit: params.limit, total, pages: Math.ceil(total / params.limit) },
  };
}

/*
 * Keyset paging, beside page paging: `cursor` is opaque to clients (they pass back
 * `pagination.next_cursor`); inside it is the position of the last row of the previous page in the
 * list's order (created_at, id), so a page is an index range scan at any depth and rows inserted
 * meanwhile never shift what comes next.
 */

export type KeysetPosition = { at: string; id: string };
/** `cursor: null` = from the start (`cursor=` given empty). */
export type CursorParams = { cursor: KeysetPosition | null; limit: number };
export type CursorPagination = Omit<Pagination, 'page'> & { page: number | null; next_cursor: string | null };
export type CursorPage<T> = { data: T[]; pagination: CursorPagination };

const POSITION =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** A position whose id part is an E.164 number (a list keyed by number, such as the do-not-call list). */
export const NUMBER_POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|(\+[1-9]\d{1,14})$/;

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.at}|${position.id}`, 'utf8').toString('base64url');
}

/** The position inside a cursor, or undefined when it is not one this API handed out. */
export function decodeCursor(cursor: string, position: RegExp = POSITION): KeysetPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined;
  const match = position.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || Number.isNaN(Date.parse(match[1]!))) return undefined;
  return { at: match[1]!, id: match[2]! };
}

/** The `cursor` query field of a keyset list whose ids match `position` (a UUID unless said). */
export function keysetCursorShape(position: RegExp = POSITION) {
  return {
    cursor: z
      .string({ message: 'cursor must be a string' })
      .transform((value, ctx): KeysetPosition | null => {
        if (value === '') return null;
        const decoded = decodeCursor(value, position);
        if (!decoded) {
          ctx.addIssue({ code: 'custom', message: 'Must be pagination.next_cursor of a previous page, or empty' });
          return z.NEVER;
        }
        return decoded;
      })
      .optional(),
  };
}

/** Spread into a list query schema beside `paginationShape`; pair it with `rejectCursorWithPage`. */
export const cursorShape = keysetCursorShape();

/** `cursor` and `page` name two different positions: asking for both is a 400, not a silent choice. */
export function rejectCursorWithPage(query: unknown): void {
  const q = (query ?? {}) as Record<string, unknown>;
  if (q.cursor !== undefined && q.page !== undefined)
    throw new ValidationError('Invalid query parameters', [
      { field: 'cursor', message: 'Use either cursor or page, not both' },
    ]);
}

/** The pagination object of a page fetched either way; `next_cursor` is null on the last page. */
export function cursorPagination(
  params: PageParams | CursorParams,
  total: number,
  next: KeysetPosition | undefined,
): CursorPagination {
  return {
    page: 'page' in params ? params.page : null,
    limit: params.limit,
    total,
    pages: Math.ceil(total / params.limit),
    next_cursor: next ? encodeCursor(next) : null,
  };
}
