/** PostgreSQL error classes the services turn into 409 CONFLICT (a race that passed the pre-checks). */
type PgError = { code?: string; constraint?: string };

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as PgError | undefined;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const e = error as PgError | undefined;
  return e?.code === '23503' && (constraint === undefined || e.constraint === constraint);
}
