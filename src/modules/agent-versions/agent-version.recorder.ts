import type { Knex } from 'knex';
import type { AgentRef, AuthContext } from '../../auth/auth-context.js';
import { currentRequestContext, requestKeyPrefix } from '../../audit/request-context.js';
import type { Clock } from '../../clock.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import type { AgentVersionRepository } from './agent-version.repository.js';

/** What changed the configuration; stored with the version and sent in `agent.updated`. */
export type ConfigurationChangeKind =
  | 'agent.created'
  | 'agent.updated'
  | 'workflow.replaced'
  | 'tool.created'
  | 'tool.updated'
  | 'tool.deleted'
  | 'version.restored';

/**
 * Called by every service that changes an agent's configuration, inside its transaction after the
 * change: stores the configuration as the agent's next version and records the `agent.updated`
 * event, so the change, its version and its event commit together or not at all.
 */
export class AgentVersionRecorder {
  constructor(
    private readonly versions: AgentVersionRepository,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  async record(
    trx: Knex.Transaction,
    agent: AgentRef,
    auth: AuthContext,
    change: ConfigurationChangeKind,
    restoredFrom: number | null = null,
  ): Promise<number | undefined> {
    const versions = this.versions.with(trx);
    const version = await versions.takeNextNumber(agent.id);
    const configuration = await versions.loadConfiguration(agent.id, agent.organization_id);
    if (!configuration) return undefined;
    const isKey = auth.kind === 'api_key';
    const apiKeyId = auth.apiKeyId;
    const at = this.clock.now();
    await versions.insert({
      version,
      organization_id: agent.organization_id,
      agent_id: agent.id,
      configuration,
      change,
      restored_from: restoredFrom,
      actor_type: isKey ? 'api_key' : 'user',
      actor_user_id: isKey ? null : auth.userId,
      actor_key_prefix: isKey && apiKeyId ? await requestKeyPrefix(() => versions.keyPrefix(apiKeyId)) : null,
      request_id: currentRequestContext()?.requestId ?? null,
      created_at: at,
    });
    await this.events.record(trx, {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      type: 'agent.updated',
      payload: { agent_id: agent.id, version, change, changed_at: at.toISOString() },
    });
    return version;
  }
}
