import type { RequestHandler } from 'express';
import { ValidationError, formatPath } from '../errors/index.js';
import { findUnstorable } from '../validation/text.js';

/**
 * The text rule (src/validation/text.ts) over everything a client sends as text: the parsed JSON
 * body and the query string. It runs for every route behind it, so a new field or filter is covered
 * without its schema remembering anything. The first offending value is named by its path.
 */
export const inputGuard: RequestHandler = (req, _res, next) => {
  const query = findUnstorable(req.query);
  if (query) {
    return next(
      new ValidationError('Invalid query parameters', [
        { field: formatPath(query.path) || 'query', message: query.message },
      ]),
    );
  }
  const body = findUnstorable(req.body);
  if (body) {
    return next(
      new ValidationError('Request body is invalid', [
        { field: formatPath(body.path) || 'body', message: body.message },
      ]),
    );
  }
  next();
};

/**
 * A path with malformed percent-encoding (`%E0%A4%A`) is 400 before anything else looks at it:
 * otherwise the answer would depend on which check a route reaches first (a token-only route would
 * say 401 to an API key, another route 404), for a path no route can mean (under /v1 or elsewhere).
 */
export const pathGuard: RequestHandler = (req, _res, next) => {
  if (req.path.includes('%')) {
    try {
      decodeURIComponent(req.path);
    } catch {
      return next(new ValidationError('The path contains malformed percent-encoding'));
    }
  }
  next();
};
