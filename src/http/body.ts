import express, { type Request, type RequestHandler } from 'express';
import { ValidationError } from '../errors/index.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Bulk uploads: an outbound campaign's recipients (up to 10,000 in one request) may be larger than
 * the body limit, and its recipients route also takes `text/csv` (parsed by its router).
 */
const BULK_PATH = /\/campaigns(\/[^/]+\/recipients)?\/?$/;
const CSV_PATH = /\/campaigns\/[^/]+\/recipients\/?$/;
export const BULK_BODY_LIMIT = '20mb';

/**
 * The operations whose request body the OpenAPI document declares as `multipart/form-data`, as
 * `METHOD path-template`: their routers stream the body themselves.
 */
export function multipartOperations(document: { paths?: Record<string, unknown> }): Set<string> {
  const operations = new Set<string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      const content = (operation as { requestBody?: { content?: Record<string, unknown> } })?.requestBody?.content;
      if (content && 'multipart/form-data' in content) operations.add(`${method.toUpperCase()} ${path}`);
    }
  }
  return operations;
}

/**
 * JSON only, bounded, and an object at the top level; reads skip it entirely. A multipart body
 * passes untouched only to an operation in `multipart` (matched by route template).
 */
export function jsonBody(limit: string, multipart: Set<string> = new Set()): RequestHandler {
  const parseJson = express.json({ limit, strict: false, type: 'application/json' });
  const parseBulkJson = express.json({ limit: BULK_BODY_LIMIT, strict: false, type: 'application/json' });
  return (req, res, next) => {
    if (!WRITE_METHODS.has(req.method)) return next();
    if (hasBody(req) && req.is('text/csv') && CSV_PATH.test(req.path)) return next();
    if (
      multipart.size > 0 &&
      req.routeTemplate &&
      multipart.has(`${req.method} ${req.routeTemplate.path}`) &&
      req.is('multipart/form-data')
    )
      return next();
    if (hasBody(req) && !req.is('application/json'))
      return next(new ValidationError('Content-Type must be application/json'));
    (BULK_PATH.test(req.path) ? parseBulkJson : parseJson)(req, res, (error?: unknown) => {
      if (error) return next(error);
      if (req.body !== undefined && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
        return next(new ValidationError('Request body must be a JSON object'));
      }
      next();
    });
  };
}
