import { assertAgentAccess, assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import { NotFoundError } from '../../errors/index.js';
import type { AgentRow } from './agent.repository.js';

/** Where agent rows come from: the read cache (src/cache/read-cache.ts), or the database. */
export type AgentSource = { findAgent(id: string): Promise<AgentRow | undefined>; sync(): Promise<void> };

/**
 * The check every `/v1/agents/{agentId}...` service makes first: permission (403), agent in a
 * reachable organization (404), permission there and agent scope (403 AGENT_NOT_ACCESSIBLE).
 * The row it returns is shared and frozen: read it, never change it.
 */
export class AgentAccess {
  constructor(private readonly agents: AgentSource) {}

  async resolve(auth: AuthContext, agentId: string, permission: Permission): Promise<Readonly<AgentRow>> {
    assertPermission(auth, permission);
    const prefetched = auth.prefetchedAgent?.id === agentId ? auth.prefetchedAgent : undefined;
    // A prefetched row comes from this module's own reader (agentRowFromJson, see the container).
    const agent = prefetched
      ? (prefetched.row as Readonly<AgentRow> | undefined)
      : await this.agents.findAgent(agentId);
    if (!agent || !auth.organizations.has(agent.organization_id)) throw new NotFoundError('Agent');
    assertAgentAccess(auth, agent, permission);
    return agent;
  }

  /** After a committed change to an agent row: the next request on this instance reads it anew. */
  changed(): Promise<void> {
    return this.agents.sync();
  }
}
