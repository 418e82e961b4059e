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

/**
 * A named prepared statement whose result columns changed type under it (a migration altered a column
 * it selects): PostgreSQL refuses every further execution of it on that connection.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const e = error as (PgError & { message?: string }) | undefined;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/** Node socket errors that mean the database cannot be reached right now. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOTCONN',
]);

/**
 * SQLSTATE classes and codes that mean "the server cannot serve this connection now", not "this
 * query is wrong": 08 connection exception, 53 insufficient resources (53300 too many clients),
 * 57P01-57P05 admin/crash shutdown, cannot connect now, idle session timeout.
 */
function isUnavailableSqlState(code: string): boolean {
  return /^(08|53)[0-9A-Z]{3}$/.test(code) || /^57P0[1-5]$/.test(code);
}

/** Messages of the pg driver, pg-pool and knex that carry no code but mean a lost or unobtainable connection. */
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  // pg: a new connection that got no answer within connectionTimeoutMillis, a query past query_timeout.
  'timeout expired',
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Knex: Timeout acquiring a connection',
  'the database system is starting up',
  'the database system is shutting down',
  'terminating connection due to administrator command',
  'sorry, too many clients already',
];

/**
 * True when `error` says the database could not be reached or the connection was lost (network,
 * refused, reset, too many clients, timeouts acquiring a connection, server shutting down). The
 * error handler answers these with 503; anything else about the database remains a bug (500).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 3) return false;
  const e = error as { name?: string; code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (e.name === 'KnexTimeoutError') return true;
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || isUnavailableSqlState(e.code))) return true;
  if (typeof e.message === 'string' && CONNECTION_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  // Node reports a refused dual-stack connect as an AggregateError; knex and pg-boss may wrap.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
