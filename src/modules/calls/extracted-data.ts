import type { ErrorDetail } from '../../errors/index.js';
import type { AnalysisField } from '../agents/analysis-fields.js';

/** A call's typed outcomes: field name -> string, number, boolean, enum value or date (YYYY-MM-DD). */
export type ExtractedData = Record<string, string | number | boolean>;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
export const EXTRACTED_STRING_MAX = 2000;

/** A real calendar date written YYYY-MM-DD. */
export function isIsoDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === value;
}

/** Why `value` is not a value of `field`, or undefined when it is. */
export function valueProblem(field: AnalysisField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return 'Must be a string';
      return [...value].length > EXTRACTED_STRING_MAX
        ? `Must be at most ${EXTRACTED_STRING_MAX} characters`
        : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'Must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'Must be true or false';
    case 'enum':
      return typeof value === 'string' && field.values?.includes(value)
        ? undefined
        : `Must be one of: ${(field.values ?? []).join(', ')}`;
    case 'date':
      return typeof value === 'string' && isIsoDate(value) ? undefined : 'Must be a date YYYY-MM-DD';
  }
}

/**
 * `extracted_data` checked against the agent's fields as they are now: an unknown name, a wrong type,
 * an enum value not listed and a missing required field are each one detail naming
 * `extracted_data.<name>`. A null value means "not known" and is left out of what is stored.
 */
export function checkExtractedData(
  fields: readonly AnalysisField[],
  data: Record<string, unknown> | undefined,
): { data: ExtractedData; details: ErrorDetail[] } {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const details: ErrorDetail[] = [];
  const out: ExtractedData = {};
  for (const [name, value] of Object.entries(data ?? {})) {
    const field = byName.get(name);
    if (!field) {
      details.push({ field: `extracted_data.${name}`, message: 'Not an analysis field of this agent' });
      continue;
    }
    if (value === null) continue;
    const problem = valueProblem(field, value);
    if (problem) details.push({ field: `extracted_data.${name}`, message: problem });
    else out[name] = value as string | number | boolean;
  }
  for (const field of fields) {
    if (
      field.required &&
      out[field.name] === undefined &&
      !details.some((d) => d.field === `extracted_data.${field.name}`)
    )
      details.push({ field: `extracted_data.${field.name}`, message: 'Required' });
  }
  return { data: out, details };
}
