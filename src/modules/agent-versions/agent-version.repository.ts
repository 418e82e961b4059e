import type { Knex } from 'knex';
import { findKeyPrefix } from '../../audit/audit-log.repository.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import {
  CONFIGURATION_AGENT_FIELDS,
  CONFIGURATION_TOOL_FIELDS,
  type AgentConfiguration,
  type ToolSnapshot,
} from './agent-configuration.js';

export type VersionActor = { type: 'user' | 'api_key'; user_id: string | null; key_prefix: string | null };

export type AgentVersionRow = {
  id: string;
  organization_id: string;
  agent_id: string;
  version: number;
  configuration: AgentConfiguration;
  change: string;
  restored_from: number | null;
  actor_type: 'user' | 'api_key';
  actor_user_id: string | null;
  actor_key_prefix: string | null;
  request_id: string | null;
  created_at: Date;
};

export type NewAgentVersion = Omit<AgentVersionRow, 'id' | 'version'>;

const SUMMARY_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'version',
  'change',
  'restored_from',
  'actor_type',
  'actor_user_id',
  'actor_key_prefix',
  'request_id',
  'created_at',
] as const;

export class AgentVersionRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): AgentVersionRepository {
    return new AgentVersionRepository(trx);
  }

  /**
   * The agent's configuration as the transaction sees it. Undefined when the agent is gone. The
   * agent's own row is read first, then its tools by name.
   */
  async loadConfiguration(agentId: string, organizationId: string): Promise<AgentConfiguration | undefined> {
    const agent: Record<string, unknown> | undefined = await this.db('agents')
      .where({ id: agentId, organization_id: organizationId })
      .first([...CONFIGURATION_AGENT_FIELDS, 'workflow']);
    if (!agent) return undefined;
    const tools: ToolSnapshot[] = await this.db('tools')
      .where({ agent_id: agentId, organization_id: organizationId })
      .orderBy('name')
      .select(CONFIGURATION_TOOL_FIELDS);
    const fields: Record<string, unknown> = {};
    for (const name of CONFIGURATION_AGENT_FIELDS) fields[name] = agent[name] ?? null;
    return { ...fields, workflow: agent.workflow ?? null, tools };
  }

  /**
   * Takes the agent's next version number. The counter row stays locked until the transaction
   * ends: a concurrent change of the same agent waits here, and reads the configuration only after
   * this one committed, so version n+1 always contains version n's change.
   */
  async takeNextNumber(agentId: string): Promise<number> {
    const result = await this.db.raw(
      `INSERT INTO agent_version_counters (agent_id, last_version) VALUES (?, 1)
       ON CONFLICT (agent_id) DO UPDATE SET last_version = agent_version_counters.last_version + 1
       RETURNING last_version`,
      [agentId],
    );
    return Number(result.rows[0].last_version);
  }

  async insert(version: NewAgentVersion & { version: number }): Promise<void> {
    await this.db('agent_versions').insert({ ...version, configuration: JSON.stringify(version.configuration) });
  }

  /** The prefix of the acting key, for `actor_key_prefix` (read as the audit log reads it). */
  async keyPrefix(apiKeyId: string): Promise<string | null> {
    return findKeyPrefix(this.db, apiKeyId);
  }

  /** Newest first, without the configurations. */
  async list(
    agentId: string,
    organizationId: string,
    page: PageParams,
  ): Promise<Page<Omit<AgentVersionRow, 'configuration'>>> {
    const query = this.db('agent_versions').where({ agent_id: agentId, organization_id: organizationId });
    return paginate(query.select(SUMMARY_COLUMNS), page, [{ column: 'version', order: 'desc' }]);
  }

  async find(agentId: string, organizationId: string, version: number): Promise<AgentVersionRow | undefined> {
    return this.db('agent_versions')
      .where({ agent_id: agentId, organization_id: organizationId, version })
      .first([...SUMMARY_COLUMNS, 'configuration']);
  }
}
