import { assertPermission, organizationsWith, type AuthContext } from '../../auth/auth-context.js';
import type { Page } from '../../http/pagination.js';
import { parse } from '../../http/validate.js';
import type { AgentAccess } from './agent-access.js';
import { toAgent, type AgentRepository } from './agent.repository.js';
import { listAgentsQuery } from './agent.schemas.js';

export class AgentService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly access: AgentAccess,
  ) {}

  /** Agents of every organization where the caller may read agents, limited to the key's scope. */
  async list(auth: AuthContext, query: unknown): Promise<Page<Record<string, unknown>>> {
    assertPermission(auth, 'agents:read');
    const page = parse(listAgentsQuery, query, 'Invalid query parameters');
    return this.agents.list(organizationsWith(auth, 'agents:read'), auth.allowedAgentIds, page);
  }

  async get(auth: AuthContext, agentId: string): Promise<Record<string, unknown>> {
    return toAgent(await this.access.resolveRow(auth, agentId, 'agents:read'));
  }
}
