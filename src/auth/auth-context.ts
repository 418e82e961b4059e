import { AgentNotAccessibleError, ForbiddenError, NotFoundError, ValidationError } from '../errors/index.js';
import type { Permission, Role } from './permissions.js';

/** Who is calling, built by the authentication middleware. It says nothing about what is allowed. */
export type AuthContext = {
  kind: 'api_key' | 'token';
  userId: string;
  apiKeyId: string | null;
  /** Organizations the caller reaches, each with the permissions held there. */
  organizations: ReadonlyMap<string, ReadonlySet<Permission>>;
  /** Dashboard roles per organization (token only; empty for API keys). */
  roles: ReadonlyMap<string, Role>;
  /** null = every agent; [] = none. Always null for tokens. */
  allowedAgentIds: readonly string[] | null;
  /** API keys only: the key's limits and the counters it spends from (shared along a rotation chain). */
  rateLimit: { perMinute: number; perHour: number; budgetId: string } | null;
};

export type AgentRef = { id: string; organization_id: string };

/** Organization ids where the caller holds `permission`. */
export function organizationsWith(auth: AuthContext, permission: Permission): string[] {
  const ids: string[] = [];
  for (const [orgId, permissions] of auth.organizations) if (permissions.has(permission)) ids.push(orgId);
  return ids;
}

export function reachableOrganizations(auth: AuthContext): string[] {
  return [...auth.organizations.keys()];
}

/**
 * The organization a create writes into: `requested` (404 when out of reach, 403 without
 * `permission` there), else the only organization where the caller holds `permission`; else a 400
 * on `organization_id` saying `whenSeveral`.
 */
export function targetOrganization(
  auth: AuthContext,
  requested: string | undefined,
  permission: Permission,
  whenSeveral: string,
): string {
  if (requested !== undefined) {
    const id = requested.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, permission, id);
    return id;
  }
  const writable = organizationsWith(auth, permission);
  if (writable.length === 1) return writable[0]!;
  throw new ValidationError('Request body is invalid', [{ field: 'organization_id', message: whenSeveral }]);
}

/** TalkPilot clients match the key's wording ("API key lacks required permission: x"). */
const CALLER_NAMES = { api_key: 'API key', token: 'Dashboard role' } as const;

/** 403 FORBIDDEN naming the permission unless some reachable organization grants it. */
export function assertPermission(auth: AuthContext, permission: Permission, organizationId?: string): void {
  const granted =
    organizationId === undefined
      ? organizationsWith(auth, permission).length > 0
      : hasPermission(auth, permission, organizationId);
  if (!granted) throw new ForbiddenError(`${CALLER_NAMES[auth.kind]} lacks required permission: ${permission}`);
}

/** Whether the caller holds `permission` in `organizationId`: for answers that show more to who may read more. */
export function hasPermission(auth: AuthContext, permission: Permission, organizationId: string): boolean {
  return auth.organizations.get(organizationId)?.has(permission) === true;
}

export function isAgentAllowed(auth: AuthContext, agentId: string): boolean {
  return auth.allowedAgentIds === null || auth.allowedAgentIds.includes(agentId);
}

/** After the agent was found in a reachable organization: permission there, then agent scope. */
export function assertAgentAccess(auth: AuthContext, agent: AgentRef, permission: Permission): void {
  assertPermission(auth, permission, agent.organization_id);
  if (!isAgentAllowed(auth, agent.id)) throw new AgentNotAccessibleError();
}

/**
 * 403 AGENT_NOT_ACCESSIBLE for a key restricted to certain agents: for an organization-wide
 * operation whose answer must be complete (a data subject's export or erasure), where a view
 * limited to some agents would be wrong rather than smaller.
 */
export function assertEveryAgent(auth: AuthContext): void {
  if (auth.allowedAgentIds !== null) {
    throw new AgentNotAccessibleError(
      'This API key is restricted to certain agents; this operation needs a key without allowed_agent_ids',
    );
  }
}

/**
 * The caller as idempotency records and export slots know it: a key's rotation chain (its first
 * key, the rate-limit budget every key of the chain spends from), so a replacement key sees what the
 * key it replaced did; a dashboard user by their id.
 */
export function callerIdentity(auth: AuthContext): string {
  return auth.kind === 'api_key' && auth.rateLimit ? `key:${auth.rateLimit.budgetId}` : `user:${auth.userId}`;
}
