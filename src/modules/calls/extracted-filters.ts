import type { ErrorDetail } from '../../errors/index.js';
import type { AnalysisField } from '../agents/analysis-fields.js';
import { valueProblem } from './extracted-data.js';

/** One `extracted.<name>` condition of a calls query: equality, or a bound for numbers and dates. */
export type ExtractedFilter = {
  name: string;
  type: AnalysisField['type'];
  op: 'eq' | 'gte' | 'lte';
  value: string | number | boolean;
};

const KEY = /^extracted\.([^[\]]*)(?:\[([^\]]*)\])?$/;

/** The query without its `extracted.*` keys, which `parseExtractedFilters` reads. */
export function withoutExtractedKeys(query: unknown): Record<string, unknown> {
  const raw = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('extracted.')));
}

function typed(field: AnalysisField, raw: string): { value?: string | number | boolean; problem?: string } {
  let value: string | number | boolean = raw;
  if (field.type === 'number') {
    value = raw.trim() === '' ? Number.NaN : Number(raw);
  } else if (field.type === 'boolean') {
    if (raw !== 'true' && raw !== 'false') return { problem: 'Must be true or false' };
    value = raw === 'true';
  }
  const problem = valueProblem(field, value);
  return problem ? { problem } : { value };
}

/**
 * `extracted.<name>=<value>` (and `extracted.<name>[gte]` / `[lte]` for number and date fields) of a
 * calls query, typed by the agent's analysis_fields as they are now. Every problem is one detail
 * naming the query key (`extracted.<name>` or `extracted.<name>[gte]`).
 */
export function parseExtractedFilters(
  fields: readonly AnalysisField[],
  query: unknown,
): { filters: ExtractedFilter[]; details: ErrorDetail[] } {
  const raw = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  const byName = new Map(fields.map((f) => [f.name, f]));
  const filters: ExtractedFilter[] = [];
  const details: ErrorDetail[] = [];
  for (const [key, rawValue] of Object.entries(raw)) {
    if (!key.startsWith('extracted.')) continue;
    const m = KEY.exec(key);
    const field = m ? byName.get(m[1]!) : undefined;
    if (!m || !field) {
      details.push({ field: key, message: 'Not an analysis field of this agent' });
      continue;
    }
    const op = m[2] === undefined ? 'eq' : m[2];
    if (op !== 'eq' && op !== 'gte' && op !== 'lte') {
      details.push({ field: key, message: 'Must be extracted.<name>, extracted.<name>[gte] or extracted.<name>[lte]' });
      continue;
    }
    if (op !== 'eq' && field.type !== 'number' && field.type !== 'date') {
      details.push({ field: key, message: '[gte] and [lte] apply to number and date fields only' });
      continue;
    }
    if (typeof rawValue !== 'string') {
      details.push({ field: key, message: 'Must be given once' });
      continue;
    }
    const { value, problem } = typed(field, rawValue);
    if (problem !== undefined || value === undefined) details.push({ field: key, message: problem ?? 'Invalid' });
    else filters.push({ name: field.name, type: field.type, op, value });
  }
  return { filters, details };
}

/**
 * Field types whose stored values are counted per hour (call_outcome_hour_stats). The triggers that
 * keep the counters follow the database's is_counted_outcome_type (migrations/
 * 20261129060000_create_counted_outcome_type_rule.ts); this mirrors it so a request decides without a
 * round trip, and test/api/counted-outcome-rule.api.test.ts fails when the two disagree.
 */
export function isCountedType(type: AnalysisField['type']): boolean {
  return type === 'enum' || type === 'boolean';
}

/**
 * The one outcome condition the outcome counters answer: exactly one `extracted.<name>=<value>` on
 * an enum or boolean field. Undefined when there is none, or more, or another kind.
 */
export function countedOutcomeFilter(filters: readonly ExtractedFilter[] | undefined): ExtractedFilter | undefined {
  if (filters?.length !== 1) return undefined;
  const [filter] = filters;
  return filter!.op === 'eq' && isCountedType(filter!.type) ? filter : undefined;
}
