import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AgentAccess } from './agent-access.js';
import type { AgentRepository } from './agent.repository.js';
import { agentStatus, type AgentStatus, type StatusAgent } from './agent-status.js';

export class AgentStatusService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
  ) {}

  /** Schedule, holiday and routing status at the current time (agents:read). */
  async status(auth: AuthContext, agentId: string): Promise<AgentStatus> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const backupId = agent.backup_agent_id as string | null;
    const backup = backupId ? await this.agents.findById(backupId, [agent.organization_id]) : undefined;
    // eslint-disable-next-line no-restricted-syntax -- until AgentRow lists its columns (typed rows, issue 10)
    return agentStatus(agent as unknown as StatusAgent, backup ?? null, this.clock.now());
  }
}
