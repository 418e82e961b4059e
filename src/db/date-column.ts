/**
 * A PostgreSQL `date` as `YYYY-MM-DD`. node-postgres reads a date as local midnight, so the local
 * calendar fields give back exactly the stored day.
 */
export function dateColumn(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.slice(0, 10);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

/** A `timestamptz` carried as text inside a JSON value (`to_json`, `json_build_object`) as a Date. */
export function timestampOfJson(text: string | null): Date | null {
  return text === null ? null : new Date(text);
}
