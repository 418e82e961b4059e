import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { AppError, ServiceUnavailableError } from '../errors/index.js';
import { isDatabaseError, requestErrorOf } from './request-errors.js';

type HttpParserError = Error & { type?: string; status?: number };

const DB_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P03',
  '08006',
  '08001',
  '53300',
]);

function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  const e = error as HttpParserError & { code?: string };
  const requestError = requestErrorOf(error);
  if (requestError) return requestError;
  if (e?.name === 'KnexTimeoutError' || (e?.code && DB_UNAVAILABLE.has(e.code))) return new ServiceUnavailableError();
  return undefined;
}

/** The one place errors become the spec's envelope. Unknown errors are logged, never shown. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const appError = toAppError(error);
    const requestId = req.requestId;
    if (!appError || appError.status >= 500) {
      (req.log ?? logger).error({ err: error, request_id: requestId }, 'request failed');
    } else if (isDatabaseError(error)) {
      // Answered 4xx, but a check before the query should have caught it: worth a look.
      (req.log ?? logger).warn({ err: error, request_id: requestId }, 'database refused the request');
    }
    const rendered = appError ?? new AppError('INTERNAL_ERROR', 500, 'An unexpected error occurred');
    if (rendered.headers) for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
    if (res.headersSent) return;
    res.status(rendered.status).json({
      error: {
        code: rendered.code,
        message: rendered.message,
        ...(rendered.details && rendered.details.length > 0 ? { details: rendered.details } : {}),
        request_id: requestId,
      },
    });
  };
}
