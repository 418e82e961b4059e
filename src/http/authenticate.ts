import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { API_KEY_PATTERN, hashApiKey } from '../auth/api-key-format.js';
import type { AuthContext } from '../auth/auth-context.js';
import type { ApiKeyCredential, UserCredential } from '../auth/credentials.repository.js';
import { isPermission, permissionsForRole, type Permission, type Role } from '../auth/permissions.js';
import type { TokenVerifier } from '../auth/token.js';
import type { Clock } from '../clock.js';
import { UnauthorizedError } from '../errors/index.js';

export type Credentials = {
  findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined>;
  findUser(userId: string): Promise<UserCredential | undefined>;
  touchApiKey(id: string, at: Date): Promise<void>;
};

type Deps = { credentials: Credentials; verifyToken: TokenVerifier; clock: Clock; logger: Logger };

const LAST_USED_RESOLUTION_MS = 60_000;

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

async function authenticateApiKey(raw: string, deps: Deps): Promise<AuthContext> {
  if (!API_KEY_PATTERN.test(raw)) throw new UnauthorizedError();
  const key = await deps.credentials.findApiKeyByHash(hashApiKey(raw));
  if (!key) throw new UnauthorizedError();
  if (!key.is_active) throw new UnauthorizedError('API key is inactive');
  const now = deps.clock.now();
  if (key.expires_at && now.getTime() >= key.expires_at.getTime()) throw new UnauthorizedError('API key has expired');
  if (key.organization_ids.length === 0) throw new UnauthorizedError('The creator of this API key no longer belongs to any organization');

  if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Off the request path: the response never waits for this bookkeeping write.
    deps.credentials.touchApiKey(key.id, now).catch((error) => deps.logger.warn({ err: error }, 'last_used_at update failed'));
  }
  const permissions: ReadonlySet<Permission> = new Set(key.permissions.filter(isPermission));
  return {
    kind: 'api_key',
    userId: key.created_by,
    apiKeyId: key.id,
    organizations: new Map(key.organization_ids.map((id) => [id, permissions])),
    roles: new Map(),
    allowedAgentIds: key.allowed_agent_ids,
    rateLimit: { perMinute: key.rate_limit_per_minute, perHour: key.rate_limit_per_hour },
  };
}

async function authenticateToken(token: string, deps: Deps): Promise<AuthContext> {
  const claims = deps.verifyToken(token);
  if (!claims) throw new UnauthorizedError('Invalid or expired login token');
  const user = await deps.credentials.findUser(claims.userId);
  if (!user) throw new UnauthorizedError('Invalid or expired login token');
  const roles = new Map<string, Role>(user.memberships.map((m) => [m.organization_id, m.role]));
  return {
    kind: 'token',
    userId: user.id,
    apiKeyId: null,
    organizations: new Map(user.memberships.map((m) => [m.organization_id, permissionsForRole(m.role)])),
    roles,
    allowedAgentIds: null,
    rateLimit: null,
  };
}

/** Identifies the caller by `X-API-Key` or a dashboard `Authorization: Bearer` token. */
export function authenticate(deps: Deps): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const apiKey = req.headers['x-api-key'];
    if (typeof apiKey === 'string' && apiKey !== '') {
      req.auth = await authenticateApiKey(apiKey, deps);
      return next();
    }
    const token = bearerToken(req);
    if (token) {
      req.auth = await authenticateToken(token, deps);
      return next();
    }
    throw new UnauthorizedError();
  };
}

/** `/v1/api-keys`: the dashboard token only. */
export function authenticateTokenOnly(deps: Deps): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const token = bearerToken(req);
    if (!token) {
      if (req.headers['x-api-key']) throw new UnauthorizedError('API key management requires a dashboard login token');
      throw new UnauthorizedError('A dashboard login token is required');
    }
    req.auth = await authenticateToken(token, deps);
    next();
  };
}
