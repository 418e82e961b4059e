export type ErrorDetail = {
  field: string;
  message: string;
  /** TEST_CASES_FAILED only: the agent and its failing case, and what the case expected and got. */
  agent_id?: string;
  case_id?: string;
  case_name?: string;
  expected?: unknown;
  actual?: unknown;
};

/** Every `error.code` a response may carry; the OpenAPI document's Error schema lists the same. */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'AGENT_NOT_ACCESSIBLE',
  'IP_NOT_ALLOWED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'PRECONDITION_REQUIRED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'TEST_CASES_FAILED',
  'DO_NOT_CALL',
  'UNSUPPORTED_MEDIA_TYPE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error meant for the client: rendered into the spec's envelope by the error handler. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

type ErrorClass<M extends [message: string] | [message?: string]> = new (
  ...args: [...M, details?: ErrorDetail[]]
) => AppError;

/**
 * The base of an error class that says only its code and status: `new ForbiddenError(message)`,
 * with `details` where the code has them; with a `fallback`, the message may be left out.
 */
function errorOf(code: ErrorCode, status: number): ErrorClass<[message: string]>;
function errorOf(code: ErrorCode, status: number, fallback: string): ErrorClass<[message?: string]>;
function errorOf(code: ErrorCode, status: number, fallback?: string): ErrorClass<[message?: string]> {
  return class extends AppError {
    constructor(message = fallback ?? '', details?: ErrorDetail[]) {
      super(code, status, message, details);
    }
  };
}

export class ValidationError extends errorOf('VALIDATION_ERROR', 400) {}

export class PayloadTooLargeError extends errorOf('VALIDATION_ERROR', 413) {}

/** A file whose content is of a type the operation does not take (the content decides, not the name). */
export class UnsupportedMediaTypeError extends errorOf('UNSUPPORTED_MEDIA_TYPE', 415) {}

export class UnauthorizedError extends errorOf('UNAUTHORIZED', 401, 'Invalid or missing API key') {}

export class ForbiddenError extends errorOf('FORBIDDEN', 403) {}

export class AgentNotAccessibleError extends errorOf(
  'AGENT_NOT_ACCESSIBLE',
  403,
  'This API key is not allowed to access this agent',
) {}

/** The key has an allow-list (`allowed_ips`) and the request's address is outside it. */
export class IpNotAllowedError extends AppError {
  constructor(address: string | undefined) {
    super(
      'IP_NOT_ALLOWED',
      403,
      `This API key may not be used from ${address ?? 'an unknown address'}: it is outside the key's allowed_ips`,
    );
  }
}

export class NotFoundError extends AppError {
  constructor(resource: string) {
    super('NOT_FOUND', 404, `${resource} not found`);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string, allowed: string[]) {
    super('METHOD_NOT_ALLOWED', 405, `Method ${method} is not allowed on this path`, undefined, {
      Allow: allowed.join(', '),
    });
  }
}

export class ConflictError extends errorOf('CONFLICT', 409) {}

/** `If-Match` names none of the resource's current entity tag: nothing was written. */
export class PreconditionFailedError extends AppError {
  constructor(currentTag: string | undefined) {
    super(
      'PRECONDITION_FAILED',
      412,
      currentTag
        ? `If-Match does not match the current ETag ${currentTag}; nothing was changed`
        : 'If-Match does not match: the resource does not exist; nothing was changed',
      undefined,
      currentTag ? { ETag: currentTag } : undefined,
    );
  }
}

/** The organization's `require_if_match` is on and the write carried no `If-Match`. */
export class PreconditionRequiredError extends AppError {
  constructor() {
    super(
      'PRECONDITION_REQUIRED',
      428,
      "This organization requires If-Match on configuration writes: send the resource's ETag",
    );
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', 429, `Rate limit exceeded. Try again in ${retryAfterSeconds} seconds.`, undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** A configuration write would make saved test cases fail (the agent requires them to pass). */
export class TestCasesFailedError extends errorOf('TEST_CASES_FAILED', 409) {}

/** The database cannot be reached right now: a client should retry, not report a bug. */
export class ServiceUnavailableError extends AppError {
  constructor(message = 'The service is temporarily unavailable') {
    super('SERVICE_UNAVAILABLE', 503, message, undefined, { 'Retry-After': '1' });
  }
}

/** `Idempotency-Key` reused with a different method, path or body (IETF idempotency-key draft: 422). */
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super('VALIDATION_ERROR', 422, 'This Idempotency-Key was already used with a different request', [
      { field: 'Idempotency-Key', message: 'Use a new key for a different request' },
    ]);
  }
}

/** The first request with this `Idempotency-Key` is still running (IETF idempotency-key draft: 409). */
export class IdempotencyKeyInUseError extends AppError {
  constructor() {
    super('CONFLICT', 409, 'A request with this Idempotency-Key is still being processed; retry later', undefined, {
      'Retry-After': '1',
    });
  }
}
