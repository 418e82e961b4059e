import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import { DERIVED } from '../../cache/read-cache.js';
import { timestampOfJson } from '../../db/date-column.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import { AgentSchema } from './agent.schemas.js';
import type { Agent, AgentRow } from './agent-row.js';

export type { Agent, AgentRow } from './agent-row.js';

/** The response fields: exactly those the Agent schema (and so the OpenAPI document) declares. */
const AGENT_FIELDS = Object.keys(AgentSchema.shape) as (keyof Agent)[];
/** Every column an AgentRow has; queries select these, never `*`. */
export const AGENT_COLUMNS: (keyof AgentRow)[] = [...AGENT_FIELDS, 'workflow', 'workflow_updated_at'];
/** The columns of AgentRow that are timestamps: JSON carries them as text, the driver as Dates. */
export const AGENT_TIMESTAMP_COLUMNS = ['vacation_end', 'workflow_updated_at', 'created_at', 'updated_at'] as const;

/** The timestamps among the Agent's fields (text in the representation, Dates in the row). */
const REPRESENTED_TIMESTAMPS = AGENT_TIMESTAMP_COLUMNS.filter((c): c is 'vacation_end' | 'created_at' | 'updated_at' =>
  (AGENT_FIELDS as string[]).includes(c),
);

/** A timestamp as `Date.prototype.toISOString` writes it (UTC, milliseconds, `Z`). */
const isoText = (column: string) => `to_char(a.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * SQL for the agent `id` (an SQL expression) as one JSON value, or NULL: for a query that reads an
 * agent beside something else, where the driver would otherwise describe and parse 43 columns more
 * on every call. The value holds the Agent as the API shows it (`representation`: its fields in
 * order, timestamps already ISO 8601 text, so nothing is converted and copied per request), and the
 * workflow columns; `agentRowFromJson` turns it into the same AgentRow as a read column by column.
 */
export function agentJsonSql(id: string): string {
  const fields = AGENT_FIELDS.map((c) =>
    (REPRESENTED_TIMESTAMPS as string[]).includes(c) ? `${isoText(c)} AS ${c}` : `a.${c}`,
  );
  return `(SELECT json_build_object('representation', (SELECT to_json(r) FROM (SELECT ${fields.join(', ')}) r), 'workflow', a.workflow, 'workflow_updated_at', a.workflow_updated_at) FROM agents a WHERE a.id = ${id})`;
}

type AgentJson = { representation: Agent; workflow: AgentRow['workflow']; workflow_updated_at: string | null };

/**
 * The AgentRow of `agentJsonSql`'s value (parsed), equal to the one read column by column. Its
 * representation comes along in the row's DERIVED slot, where `toAgentOfRow` (agent-representation.ts) finds it, as it finds
 * a cached row's.
 */
export function agentRowFromJson(json: Record<string, unknown>): AgentRow {
  const { representation, workflow, workflow_updated_at } = json as AgentJson;
  // A copy of a parsed object with fast properties: V8 clones it whole.
  const row = { ...representation } as Record<string, unknown>;
  for (const field of REPRESENTED_TIMESTAMPS) row[field] = timestampOfJson(representation[field]);
  row.workflow = workflow;
  row.workflow_updated_at = timestampOfJson(workflow_updated_at);
  Object.defineProperty(row, DERIVED, { value: { agent: representation } });
  return row as AgentRow;
}

/**
 * Picks the Agent's fields: a column the schema does not declare never reaches a response. The
 * timestamps become ISO 8601 text here, as `JSON.stringify` would write them: on Node 24 a document
 * holding Date objects takes its slow path and serialises much slower than the same document
 * with strings (Node 20 less so; `npm run bench -- chain` shows the difference).
 */
export function toAgent(row: AgentRow): Agent {
  const agent: Record<string, unknown> = {};
  for (const field of AGENT_FIELDS) {
    const value = row[field];
    agent[field] = value instanceof Date ? value.toISOString() : value;
  }
  return agent as Agent;
}

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
      toAgent,
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
