import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/pg-errors.js';
import { AppError, ServiceUnavailableError } from '../errors/index.js';
import { isDatabaseError, requestErrorOf } from './request-errors.js';
import { loggedRequest } from './request-log.js';

function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  const requestError = requestErrorOf(error);
  if (requestError) return requestError;
  if (isDatabaseUnavailable(error)) return new ServiceUnavailableError();
  return undefined;
}

/**
 * The one place errors become the spec's envelope. Unknown errors are logged, never shown; the lines
 * carry the request as the request log writes it (`req`: id, method, path, query parameter names).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const appError = toAppError(error);
    const requestId = req.requestId;
    if (appError instanceof ServiceUnavailableError) {
      // An outage makes every request fail the same way: one short line each, no stack.
      logger.warn(
        { req: loggedRequest(req), error: (error as Error).message, request_id: requestId },
        'database unavailable',
      );
    } else if (!appError || appError.status >= 500) {
      logger.error({ req: loggedRequest(req), err: error, request_id: requestId }, 'request failed');
    } else if (isDatabaseError(error)) {
      // Answered 4xx, but a check before the query should have caught it: worth a look.
      logger.warn({ req: loggedRequest(req), err: error, request_id: requestId }, 'database refused the request');
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
