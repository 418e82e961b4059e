import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuthContext } from '../auth/auth-context.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The request context: the facts of the write request being served (its id, method, actor and
 * route), carried through the request's asynchronous work. It is the one thing AsyncLocalStorage
 * carries, and it carries only what describes the request: the audit row (written by an audited
 * transaction, src/audit/audited-transactions.ts) and an agent version (its request id and actor's
 * key prefix) are made of these facts, which every service would otherwise have to pass through
 * every call without using them. No result travels through it: what a service finds out (a dry
 * run's failing test cases) is returned to its router.
 */
export type RequestContext = {
  requestId: string;
  method: string;
  auth: AuthContext | undefined;
  /** Express' route pattern, e.g. `/v1/agents/:agentId/tools/:toolId`, once a route matched. */
  route: () => string | undefined;
  params: () => Record<string, string>;
  /** Set by a service when the request's resource is not in the path (a created agent). */
  note: {
    organizationId?: string;
    agentId?: string;
    resourceId?: string;
    /** An action the route does not spell (`data_subject.erased`), with its resource type and details. */
    action?: string;
    resourceType?: string;
    details?: Record<string, unknown>;
  };
  /** The caller's API key prefix once looked up (versions and the audit entry both need it). */
  keyPrefix?: string | null;
  /** The audit row of this request is written (inside one of its transactions). */
  audited: boolean;
  /** The write was announced for read-your-writes (inside one of its transactions). */
  announced?: boolean;
  /** The response went out: later work (timers started by the request) is not the request's. */
  finished: boolean;
};

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentRequestContext(): RequestContext | undefined {
  const context = storage.getStore();
  return context && !context.finished ? context : undefined;
}

export function isWriteMethod(method: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase());
}

/**
 * Lets a service name what the path does not: the organization and id of a resource it created.
 * A no-op outside a request.
 */
export function noteAuditResource(note: RequestContext['note']): void {
  const context = currentRequestContext();
  if (context) Object.assign(context.note, note);
}

/** The API key prefix, looked up at most once per request. */
export async function requestKeyPrefix(lookup: () => Promise<string | null>): Promise<string | null> {
  const context = currentRequestContext();
  if (context?.keyPrefix !== undefined) return context.keyPrefix;
  const prefix = await lookup();
  if (context) context.keyPrefix = prefix;
  return prefix;
}
