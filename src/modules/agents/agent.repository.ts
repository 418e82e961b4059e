import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import { AGENT_COLUMNS, AgentReads, type Agent, type AgentRow } from './agent-reads.js';

export type { Agent, AgentRow } from './agent-reads.js';

/** Columns stored as jsonb: arrays must be serialised, or the driver would send a PostgreSQL array. */
const JSONB_COLUMNS = ['greeting_variants', 'schedule', 'metadata', 'workflow', 'analysis_fields'];

function toColumns(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = JSONB_COLUMNS.includes(key) && value !== null && value !== undefined ? JSON.stringify(value) : value;
  }
  return out;
}

export class AgentRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): AgentRepository {
    return new AgentRepository(trx);
  }

  /** Just enough to authorise a sub-resource request: one indexed read. */
  async findRef(id: string, organizationIds: string[]): Promise<(AgentRef & { language: string | null }) | undefined> {
    return this.db('agents')
      .where({ id })
      .whereIn('organization_id', organizationIds)
      .first('id', 'organization_id', 'language');
  }

  async findById(id: string, organizationIds: string[]): Promise<AgentRow | undefined> {
    return this.db('agents').where({ id }).whereIn('organization_id', organizationIds).first(AGENT_COLUMNS);
  }

  /** The row locked for a write (FOR NO KEY UPDATE, as lockAgent): the state a precondition checks. */
  async findForUpdate(id: string, organizationId: string): Promise<AgentRow | undefined> {
    return this.db('agents').where({ id, organization_id: organizationId }).forNoKeyUpdate().first(AGENT_COLUMNS);
  }

  /** For the read cache, which is keyed by id; AgentAccess checks the organization right after. */
  async findAnyById(id: string): Promise<AgentRow | undefined> {
    return this.db('agents').where({ id }).first(AGENT_COLUMNS);
  }

  /** Newest first; `allowedIds` null = every agent of the organizations. */
  async list(organizationIds: string[], allowedIds: readonly string[] | null, page: PageParams): Promise<Page<Agent>> {
    const query = this.db('agents').whereIn('organization_id', organizationIds);
    if (allowedIds !== null) query.whereIn('id', [...allowedIds]);
    return paginate<AgentRow, Agent>(
      query.select(AGENT_COLUMNS),
      page,
      [
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ],
      AgentReads.representation,
    );
  }

  /** A phone number already taken fails with PostgreSQL's unique violation; the service maps it. */
  async create(fields: Record<string, unknown>): Promise<AgentRow> {
    const [row] = await this.db('agents').insert(toColumns(fields)).returning(AGENT_COLUMNS);
    return row;
  }

  /** Undefined when the agent is gone; a vanished backup agent fails with a foreign-key violation. */
  async update(id: string, organizationId: string, fields: Record<string, unknown>): Promise<AgentRow | undefined> {
    const [row] = await this.db('agents')
      .where({ id, organization_id: organizationId })
      .update(toColumns(fields))
      .returning(AGENT_COLUMNS);
    return row;
  }

  /** Agents of the organization that name `id` as their backup. */
  async backupReferrers(id: string, organizationId: string): Promise<{ id: string; name: string }[]> {
    return this.db('agents')
      .where({ backup_agent_id: id, organization_id: organizationId })
      .orderBy('id')
      .select('id', 'name');
  }

  /** False when nothing was deleted; a row that still references the agent fails with a foreign-key violation. */
  async delete(id: string, organizationId: string): Promise<boolean> {
    return (await this.db('agents').where({ id, organization_id: organizationId }).delete()) > 0;
  }
}
