import { assertAgentAccess, assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import { NotFoundError } from '../../errors/index.js';
import type { AgentRow } from './agent-reads.js';

/** Where agent rows come from: the read cache (src/cache/read-cache.ts), or the database. */
export type AgentSource = { findAgent(id: string): Promise<Readonly<AgentRow> | undefined>; sync(): Promise<void> };

/** `/agents/{agentId}` and everything below it, relative to the `/v1` mount. */
const AGENT_PATH = /^\/agents\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/|$)/;

/** The agent read for one request together with its key (undefined row: no such agent). */
type Prefetched = { id: string; row: Readonly<AgentRow> | undefined };

/**
 * Where AgentAccess keeps a request's prefetch: a slot on that request's own auth context under a
 * symbol only this module holds, so nothing else can read it and the AuthContext type declares no
 * agent. Not a WeakMap keyed by the context: every request's context is a young object, and an
 * entry per request makes each young-generation collection work through the map's ephemeron table;
 * on Node 24 that made the uncached agent read measurably costlier per request (`npm run bench --
 * compare` with the cache off shows the CPU per request; the server's `--cpu-prof` the collector's
 * share).
 */
const PREFETCH = Symbol('agent prefetched with the key');
type PrefetchSlot = { [PREFETCH]?: Prefetched };

/**
 * The check every `/v1/agents/{agentId}...` service makes first: permission (403), agent in a
 * reachable organization (404), permission there and agent scope (403 AGENT_NOT_ACCESSIBLE).
 * The row it returns is shared and frozen: read it, never change it.
 *
 * With the read cache off, authentication reads the path's agent in the same query as the key
 * (src/auth/credentials.repository.ts) and hands it here (`prefetched`), so the request makes one
 * round trip, not two. It is kept for that request's context alone, in a slot only AgentAccess reads.
 */
export class AgentAccess {
  constructor(private readonly agents: AgentSource) {}

  /** The agent a request path (below `/v1`) is about, if any: the one worth reading with the key. */
  agentOfPath(path: string): string | undefined {
    return AGENT_PATH.exec(path)?.[1];
  }

  /**
   * Keeps the agent `id` read with the key for the request of `auth`, a context built for that
   * request only. `resolve` uses it instead of reading the agent again.
   */
  prefetched(auth: AuthContext, id: string, row: AgentRow | undefined): void {
    (auth as PrefetchSlot)[PREFETCH] = { id, row: row && Object.freeze(row) };
  }

  async resolve(auth: AuthContext, agentId: string, permission: Permission): Promise<Readonly<AgentRow>> {
    assertPermission(auth, permission);
    const prefetched = (auth as PrefetchSlot)[PREFETCH];
    const agent = prefetched?.id === agentId ? prefetched.row : await this.agents.findAgent(agentId);
    if (!agent || !auth.organizations.has(agent.organization_id)) throw new NotFoundError('Agent');
    assertAgentAccess(auth, agent, permission);
    return agent;
  }

  /** After a committed change to an agent row: the next request on this instance reads it anew. */
  changed(): Promise<void> {
    return this.agents.sync();
  }
}
