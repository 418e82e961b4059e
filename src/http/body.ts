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

/** JSON only, bounded, and an object at the top level; reads skip it entirely. */
export function jsonBody(limit: string): RequestHandler {
  const parseJson = express.json({ limit, strict: false, type: 'application/json' });
  const parseBulkJson = express.json({ limit: BULK_BODY_LIMIT, strict: false, type: 'application/json' });
  return (req, res, next) => {
    if (!WRITE_METHODS.has(req.method)) return next();
    if (hasBody(req) && req.is('text/csv') && CSV_PATH.test(req.path)) return next();
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
