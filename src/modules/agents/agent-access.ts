import {
  assertAgentAccess,
  assertPermission,
  reachableOrganizations,
  type AgentRef,
  type AuthContext,
} from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import { NotFoundError } from '../../errors/index.js';
import type { AgentRepository, AgentRow } from './agent.repository.js';

/**
 * The check every `/v1/agents/{agentId}...` service makes first: permission (403), agent in a
 * reachable organization (404), permission there and agent scope (403 AGENT_NOT_ACCESSIBLE).
 */
export class AgentAccess {
  constructor(private readonly agents: AgentRepository) {}

  async resolve(auth: AuthContext, agentId: string, permission: Permission): Promise<AgentRef & { language: string | null }> {
    assertPermission(auth, permission);
    const agent = await this.agents.findRef(agentId, reachableOrganizations(auth));
    if (!agent) throw new NotFoundError('Agent');
    assertAgentAccess(auth, agent, permission);
    return agent;
  }

  /** Same checks, returning the whole row in the same single read. */
  async resolveRow(auth: AuthContext, agentId: string, permission: Permission): Promise<AgentRow> {
    assertPermission(auth, permission);
    const agent = await this.agents.findById(agentId, reachableOrganizations(auth));
    if (!agent) throw new NotFoundError('Agent');
    assertAgentAccess(auth, agent, permission);
    return agent;
  }
}
