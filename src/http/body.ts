import express, { type Request, type RequestHandler } from 'express';
import { ValidationError } from '../errors/index.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** JSON only, bounded, and an object at the top level; reads skip it entirely. */
export function jsonBody(limit: string): RequestHandler {
  const parseJson = express.json({ limit, strict: false, type: 'application/json' });
  return (req, res, next) => {
    if (!WRITE_METHODS.has(req.method)) return next();
    if (hasBody(req) && !req.is('application/json'))
      return next(new ValidationError('Content-Type must be application/json'));
    parseJson(req, res, (error?: unknown) => {
      if (error) return next(error);
      if (req.body !== undefined && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
        return next(new ValidationError('Request body must be a JSON object'));
      }
      next();
    });
  };
}
