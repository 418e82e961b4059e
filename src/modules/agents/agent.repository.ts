import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import { ConflictError, ValidationError } from '../../errors/index.js';
import { paginate, type Page, type PageParams } from '../../http/pagination.js';
import { AgentSchema } from './agent.schemas.js';
import type { Agent, AgentRow } from './agent-row.js';

export type { Agent, AgentRow } from './agent-row.js';

/** The response fields: exactly those the Agent schema (and so the OpenAPI document) declares. */
const AGENT_FIELDS = Object.keys(AgentSchema.shape) as (keyof Agent)[];
/** Every column an AgentRow has; queries select these, never `*`. */
const AGENT_COLUMNS: (keyof AgentRow)[] = [...AGENT_FIELDS, 'workflow', 'workflow_updated_at'];

/** Picks the Agent's fields: a column the schema does not declare never reaches a response. */
export function toAgent(row: AgentRow): Agent {
  return Object.fromEntries(AGENT_FIELDS.map((field) => [field, row[field]])) as Agent;
}

/** Columns stored as jsonb: arrays must be serialised, or the driver would send a PostgreSQL array. */
const JSONB_COLUMNS = ['greeting_variants', 'schedule', 'metadata', 'workflow'];

function toColumns(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = JSONB_COLUMNS.includes(key) && value !== null && value !== undefined ? JSON.stringify(value) : value;
  }
  return out;
}

const PG_UNIQUE_VIOLATION = '23505';
const PG_FOREIGN_KEY_VIOLATION = '23503';

function pgCode(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

export class AgentRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

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
      toAgent,
    );
  }

  async create(fields: Record<string, unknown>): Promise<AgentRow> {
    try {
      const [row] = await this.db('agents').insert(toColumns(fields)).returning(AGENT_COLUMNS);
      return row;
    } catch (error) {
      if (pgCode(error) === PG_UNIQUE_VIOLATION) {
        throw new ConflictError('An agent with this phone number already exists', [
          { field: 'phone_number', message: 'Already used by another agent' },
        ]);
      }
      throw error;
    }
  }

  /** Undefined when the agent is gone. */
  async update(id: string, organizationId: string, fields: Record<string, unknown>): Promise<AgentRow | undefined> {
    try {
      const [row] = await this.db('agents')
        .where({ id, organization_id: organizationId })
        .update(toColumns(fields))
        .returning(AGENT_COLUMNS);
      return row;
    } catch (error) {
      // The backup agent was deleted between the check and this write.
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION) {
        throw new ValidationError('Request body is invalid', [
          { field: 'backup_agent_id', message: 'Must be another agent of the same organization' },
        ]);
      }
      throw error;
    }
  }

  /** Agents of the organization that name `id` as their backup. */
  async backupReferrers(id: string, organizationId: string): Promise<{ id: string; name: string }[]> {
    return this.db('agents')
      .where({ backup_agent_id: id, organization_id: organizationId })
      .orderBy('id')
      .select('id', 'name');
  }

  /** False when nothing was deleted; a row that still references the agent is a 409. */
  async delete(id: string, organizationId: string): Promise<boolean> {
    try {
      return (await this.db('agents').where({ id, organization_id: organizationId }).delete()) > 0;
    } catch (error) {
      if (pgCode(error) === PG_FOREIGN_KEY_VIOLATION)
        throw new ConflictError('The agent is still referenced and cannot be deleted');
      throw error;
    }
  }
}
