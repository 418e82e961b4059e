import express, { type RequestHandler } from 'express';
import { ValidationError } from '../errors/index.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** JSON only, bounded, and an object at the top level; reads and GETs skip it entirely. */
export function jsonBody(limit: string): RequestHandler {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (WRITE_METHODS.has(req.method) && hasBody(req) && !req.is('application/json')) {
      throw new ValidationError('Content-Type must be application/json');
    }
    next();
  };
  const requireObject: RequestHandler = (req, _res, next) => {
    if (req.body !== undefined && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
      throw new ValidationError('Request body must be a JSON object');
    }
    next();
  };
  const parseJson = express.json({ limit, strict: false, type: 'application/json' });
  return (req, res, next) => {
    if (!WRITE_METHODS.has(req.method)) return next();
    requireJson(req, res, (error?: unknown) => {
      if (error) return next(error);
      parseJson(req, res, (parseError?: unknown) => (parseError ? next(parseError) : requireObject(req, res, next)));
    });
  };
}
