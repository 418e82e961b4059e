import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { Statement } from '../db/statement.js';
import { paginate, type Page, type PageParams } from '../api/pagination.js';

/**
 * Prefixes of API keys by id, as found. A key's prefix is written once, when the key is made (a
 * rotation makes a new key), so a prefix found stays true: a key that writes often (a dialer
 * reporting each attempt) is not looked up for every audit row.
 */
const keyPrefixes = new Map<string, string>();
const KEY_PREFIXES_KEPT = 10_000;

/**
 * The prefix of an API key by id: the actor of an audit entry and of an agent version
 * (`actor_key_prefix`). Both repositories read it here; `requestKeyPrefix` keeps it for the request.
 */
export async function findKeyPrefix(db: Db | Knex.Transaction, apiKeyId: string): Promise<string | null> {
  const known = keyPrefixes.get(apiKeyId);
  if (known !== undefined) return known;
  const row: { key_prefix: string } | undefined = await db('api_keys').where({ id: apiKeyId }).first('key_prefix');
  if (!row) return null;
  if (keyPrefixes.size >= KEY_PREFIXES_KEPT) keyPrefixes.clear();
  keyPrefixes.set(apiKeyId, row.key_prefix);
  return row.key_prefix;
}

export type NewAuditEntry = {
  organization_id: string;
  agent_id: string | null;
  action: string;
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  actor_type: 'user' | 'api_key';
  actor_user_id: string | null;
  actor_key_prefix: string | null;
  request_id: string;
  /** Counts and ids an action adds (an erasure's counts); never a request body. */
  details?: Record<string, unknown> | null;
  created_at: Date;
};

export type AuditEntry = NewAuditEntry & { id: string };

export type AuditFilter = {
  agentId?: string;
  actor?: string;
  action?: string;
  from?: Date;
  to?: Date;
};

const COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'action',
  'method',
  'route',
  'resource_type',
  'resource_id',
  'actor_type',
  'actor_user_id',
  'actor_key_prefix',
  'request_id',
  'details',
  'created_at',
] as const;

/** The columns a new entry gives (the id is the column's default). */
const NEW_COLUMNS = COLUMNS.filter((column) => column !== 'id');

/** A new entry's insert, written once: knex compiled it on every audited write (`npm run bench -- calls` intake). */
const INSERT_SQL = `INSERT INTO audit_log (${NEW_COLUMNS.join(', ')}) VALUES (${NEW_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

export class AuditLogRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Db | Knex.Transaction): AuditLogRepository {
    return new AuditLogRepository(trx);
  }

  async insert(entry: NewAuditEntry): Promise<void> {
    await this.insertQuery(entry);
  }

  /**
   * `insert` as a statement to run as part of another one (`oneStatement`). `when`: written only when
   * this SQL condition over the other statement holds (the row's fields then go as one JSON value,
   * typed by the table's own row type).
   */
  insertStatement(entry: NewAuditEntry, when?: string): Statement {
    if (when !== undefined) {
      const columns = COLUMNS.filter((c) => c !== 'id');
      return {
        text:
          `INSERT INTO audit_log (${columns.join(', ')}) SELECT ${columns.map((c) => `r.${c}`).join(', ')} ` +
          `FROM jsonb_populate_record(NULL::audit_log, $1::jsonb) r WHERE ${when}`,
        values: [JSON.stringify({ details: null, ...entry })],
      };
    }
    return { text: INSERT_SQL, values: NEW_COLUMNS.map((column) => entry[column] ?? null) };
  }

  private insertQuery(entry: NewAuditEntry): Knex.QueryBuilder {
    return this.db('audit_log').insert(entry);
  }

  /** The organization of an agent, when the agent (still) exists. */
  async agentOrganization(agentId: string): Promise<string | undefined> {
    const row: { organization_id: string } | undefined = await this.db('agents')
      .where({ id: agentId })
      .first('organization_id');
    return row?.organization_id;
  }

  /** The prefix of the acting key, for `actor_key_prefix`. */
  async keyPrefix(apiKeyId: string): Promise<string | null> {
    return findKeyPrefix(this.db, apiKeyId);
  }

  /** Newest first. */
  async list(
    organizationId: string,
    filter: AuditFilter,
    page: PageParams,
    allowedAgentIds: readonly string[] | null,
  ): Promise<Page<AuditEntry>> {
    const query = this.db('audit_log').where({ organization_id: organizationId });
    if (allowedAgentIds !== null) query.whereIn('agent_id', [...allowedAgentIds]);
    if (filter.agentId) query.where({ agent_id: filter.agentId });
    if (filter.action) query.where({ action: filter.action });
    if (filter.actor) {
      const actor = filter.actor;
      query.where((q) => {
        q.where({ actor_key_prefix: actor });
        if (/^[0-9a-f-]{36}$/i.test(actor)) q.orWhere({ actor_user_id: actor.toLowerCase() });
      });
    }
    if (filter.from) query.where('created_at', '>=', filter.from);
    if (filter.to) query.where('created_at', '<', filter.to);
    return paginate<AuditEntry>(query.select(COLUMNS), page, [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  }

  /** Deletes up to `batch` entries older than `before`; returns how many. */
  async purgeBefore(before: Date, batch: number): Promise<number> {
    const result = await this.db.raw(
      `DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE created_at < ? LIMIT ?)`,
      [before, batch],
    );
    return result.rowCount ?? 0;
  }
}
