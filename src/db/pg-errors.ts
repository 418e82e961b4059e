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

/** A serialization failure or deadlock: the transaction lost a race and may be run again. */
export function isRetryableConflict(error: unknown): boolean {
  const e = error as PgError | undefined;
  return e?.code === '40001' || e?.code === '40P01';
}
