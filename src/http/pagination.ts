import type { Knex } from 'knex';
import { z } from 'zod';

const positiveInt = (name: string, max?: number) =>
  z
    .string({ message: `${name} must be an integer` })
    .regex(/^\d+$/, `${name} must be an integer`)
    .transform(Number)
    .refine(
      (n) => n >= 1 && (max === undefined || n <= max),
      max ? `${name} must be between 1 and ${max}` : `${name} must be at least 1`,
    );

/** The one pagination schema: strict, no silent clamping. Spread into list query schemas. */
export const paginationShape = {
  page: positiveInt('page').default(1),
  limit: positiveInt('limit', 100).default(20),
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
