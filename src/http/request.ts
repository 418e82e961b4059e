import type { Request } from 'express';
import type { AuthContext } from '../auth/auth-context.js';
import { UnauthorizedError } from '../errors/index.js';

/** The caller of an authenticated route. */
export function authOf(req: Request): AuthContext {
  if (!req.auth) throw new UnauthorizedError();
  return req.auth;
}
