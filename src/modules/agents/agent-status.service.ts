import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AgentAccess } from './agent-access.js';
import type { AgentRepository } from './agent.repository.js';
import type { AgentStatus } from './agent-status.js';
import { decideCall, NO_CALLER, type CallConfiguration } from './call-decision.js';

export class AgentStatusService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
  ) {}

  /** Schedule, holiday and routing status at the current time (agents:read). */
  async status(auth: AuthContext, agentId: string): Promise<AgentStatus> {
    const agent = await this.access.resolve(auth, agentId, 'agents:read');
    const backupId = agent.backup_agent_id;
    const backup = backupId ? await this.agents.findById(backupId, [agent.organization_id]) : undefined;
    // The same decision a call simulation makes; the status needs no caller, people or tools.
    const config: CallConfiguration = {
      agent,
      backup: backup ?? null,
      employees: [],
      slots: [],
      tools: [],
    };
    return decideCall(config, this.clock.now(), NO_CALLER).status;
  }
}
