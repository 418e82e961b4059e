import { isForeignKeyViolation, isRetryableConflict, isUniqueViolation } from '../db/pg-errors.js';
import { AppError, ConflictError, PayloadTooLargeError, ValidationError } from '../errors/index.js';

/** What body-parser, raw-body and the router throw: http-errors with a status and often a `type`. */
type HttpError = Error & { type?: string; status?: number; statusCode?: number; expose?: boolean; code?: string };

/** Errors of the request itself rather than of the service, all rendered as 4xx with the envelope. */
export function requestErrorOf(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as HttpError;
  switch (e.type) {
    case 'entity.too.large':
      return new PayloadTooLargeError('Request body is too large');
    case 'entity.parse.failed':
      return new ValidationError('Request body is not valid JSON');
    case 'encoding.unsupported':
      return new AppError(
        'VALIDATION_ERROR',
        415,
        'Unsupported Content-Encoding: send the body uncompressed or as gzip, deflate or br',
      );
    case 'charset.unsupported':
      return new AppError('VALIDATION_ERROR', 415, 'Unsupported charset: send the body as UTF-8');
  }
  if (e instanceof URIError) return new ValidationError('The path contains malformed percent-encoding');
  // A serialization failure or deadlock that survived the transaction helper's retry, or a unique
  // or foreign-key violation no service turned into its own message (a row changed by a concurrent
  // request between the checks and the write).
  if (isRetryableConflict(e) || isUniqueViolation(e) || isForeignKeyViolation(e)) {
    return new ConflictError('The request conflicted with a concurrent change to the same data; retry it');
  }
  // A database data exception (class 22: out of range, untranslatable character) is a value no
  // schema caught: still the client's input, so 400 rather than 500.
  if (isDatabaseError(error) && error.code.startsWith('22')) {
    return new ValidationError('A value in the request cannot be stored');
  }
  const status = e.status ?? e.statusCode;
  if (e.expose && typeof status === 'number' && status >= 400 && status < 500) {
    // Also a compressed body that does not decode (body-parser passes the zlib error on as 400).
    return new AppError('VALIDATION_ERROR', status, status === 400 ? 'The request could not be read' : e.message);
  }
  return undefined;
}

/** An error raised by PostgreSQL itself (it carries a SQLSTATE and a severity). */
export function isDatabaseError(error: unknown): error is Error & { code: string; severity: string } {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && e.code.length === 5 && typeof e.severity === 'string';
}
