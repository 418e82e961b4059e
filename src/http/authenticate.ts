import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { API_KEY_PATTERN, hashApiKey } from '../auth/api-key-format.js';
import type { AgentRef, AuthContext } from '../auth/auth-context.js';
import type { ApiKeyCredential, ApiKeyWithAgent, UserCredential } from '../auth/credentials.repository.js';
import { keyOrganizations, tokenOrganizations } from '../auth/access.js';
import { isAddressAllowed, normaliseAddress } from '../auth/ip-allow-list.js';
import type { Role } from '../auth/permissions.js';
import type { TokenVerifier } from '../auth/token.js';
import type { Clock } from '../clock.js';
import { IpNotAllowedError, UnauthorizedError } from '../errors/index.js';
import { clientAddress } from './client-address.js';

export type Credentials<A extends AgentRef> = {
  findApiKeyByHash(hash: string): Promise<ApiKeyCredential | undefined>;
  findUser(userId: string): Promise<UserCredential | undefined>;
  /** When offered (nothing cached): the key and the path's agent in one round trip. */
  findApiKeyWithAgent?(hash: string, agentId: string): Promise<ApiKeyWithAgent<A> | undefined>;
};

/**
 * The agents module's side of reading an agent with the key (AgentAccess): which agent a path is
 * about, and where the agent read for a request goes (kept for that request's context, which never
 * carries it).
 */
export type AgentPrefetch<A extends AgentRef> = {
  agentOfPath(path: string): string | undefined;
  prefetched(auth: AuthContext, agentId: string, agent: A | undefined): void;
};

/** Where due `last_used_at` writes go: batched, off the request path (src/auth/last-used-recorder.ts). */
export type LastUsed = { record(id: string, at: Date): void };

type Deps<A extends AgentRef> = {
  credentials: Credentials<A>;
  agents: AgentPrefetch<A>;
  lastUsed: LastUsed;
  verifyToken: TokenVerifier;
  clock: Clock;
  logger: Logger;
};

const LAST_USED_RESOLUTION_MS = 60_000;

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

/**
 * What a key may do (the model is src/auth/access.ts). Pure: the same credential always gives the
 * same (read-only) context.
 */
function apiKeyContext(key: ApiKeyCredential): AuthContext {
  return {
    kind: 'api_key',
    userId: key.created_by,
    apiKeyId: key.id,
    organizations: keyOrganizations(key.permissions, key.creator_roles),
    roles: new Map(),
    allowedAgentIds: key.allowed_agent_ids,
    rateLimit: {
      perMinute: key.rate_limit_per_minute,
      perHour: key.rate_limit_per_hour,
      budgetId: key.rate_limit_budget_id,
    },
  };
}

function tokenContext(user: UserCredential): AuthContext {
  return {
    kind: 'token',
    userId: user.id,
    apiKeyId: null,
    organizations: tokenOrganizations(user.memberships),
    roles: new Map<string, Role>(user.memberships.map((m) => [m.organization_id, m.role])),
    allowedAgentIds: null,
    rateLimit: null,
  };
}

function isEmpty(record: Readonly<Record<string, unknown>>): boolean {
  for (const _ in record) return false;
  return true;
}

/**
 * Identifies the caller by `X-API-Key` or a dashboard `Authorization: Bearer` token. It decides
 * nothing about permissions; services do.
 */
export function createAuthentication<A extends AgentRef>(deps: Deps<A>): { any: RequestHandler } {
  // A cached credential is one object for as long as it is cached: its context is built once.
  const contexts = new WeakMap<ApiKeyCredential, AuthContext>();
  // When each key was last written as used by this instance. A cached credential keeps its old
  // `last_used_at`, so this, not the row, decides whether the once-a-minute write is due.
  const lastTouched = new Map<string, number>();

  function touchDue(key: ApiKeyCredential, now: number): boolean {
    const last = Math.max(key.last_used_at?.getTime() ?? 0, lastTouched.get(key.id) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return false;
    if (lastTouched.size > 100_000) lastTouched.clear();
    lastTouched.set(key.id, now);
    return true;
  }

  /** The key alone, or with the agent of `agentId` when the credentials can read both at once. */
  async function lookUp(hash: string, agentId: string | undefined): Promise<ApiKeyWithAgent<A> | undefined> {
    if (agentId && deps.credentials.findApiKeyWithAgent) return deps.credentials.findApiKeyWithAgent(hash, agentId);
    const key = await deps.credentials.findApiKeyByHash(hash);
    return key && { key, agent: undefined };
  }

  async function apiKey(raw: string, agentId: string | undefined, req: Request): Promise<AuthContext> {
    if (!API_KEY_PATTERN.test(raw)) throw new UnauthorizedError();
    const found = await lookUp(hashApiKey(raw), agentId);
    if (!found) throw new UnauthorizedError();
    const key = found.key;
    if (!key.is_active) throw new UnauthorizedError('API key is inactive');
    const now = deps.clock.now().getTime();
    if (key.expires_at && now >= key.expires_at.getTime()) throw new UnauthorizedError('API key has expired');
    if (isEmpty(key.creator_roles))
      throw new UnauthorizedError('The creator of this API key no longer belongs to any organization');
    // Before the rate limit (next middleware) is charged: a refused address spends nothing.
    if (key.allowed_ips) {
      const address = clientAddress(req);
      if (!isAddressAllowed(key.allowed_ips, address)) {
        throw new IpNotAllowedError(normaliseAddress(address)?.toString());
      }
    }
    // Batched, off the request path: the response never waits for this bookkeeping write.
    if (touchDue(key, now)) deps.lastUsed.record(key.id, new Date(now));
    if (agentId && deps.credentials.findApiKeyWithAgent) {
      // A context of this request's own, never shared, so that the agent read with it is this request's.
      const context = apiKeyContext(key);
      deps.agents.prefetched(context, agentId, found.agent);
      return context;
    }
    let context = contexts.get(key);
    if (!context) contexts.set(key, (context = apiKeyContext(key)));
    return context;
  }

  async function token(raw: string): Promise<AuthContext> {
    const claims = deps.verifyToken(raw);
    if (!claims) throw new UnauthorizedError('Invalid or expired login token');
    const user = await deps.credentials.findUser(claims.userId);
    if (!user) throw new UnauthorizedError('Invalid or expired login token');
    return tokenContext(user);
  }

  return {
    any: async (req: Request, _res: Response, next: NextFunction) => {
      const key = req.headers['x-api-key'];
      if (typeof key === 'string' && key !== '') {
        req.auth = await apiKey(key, deps.agents.agentOfPath(req.path), req);
        return next();
      }
      const bearer = bearerToken(req);
      if (!bearer) throw new UnauthorizedError();
      req.auth = await token(bearer);
      next();
    },
  };
}
