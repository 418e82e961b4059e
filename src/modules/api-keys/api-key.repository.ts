import type { Knex } from 'knex';
import { KEY_GRANT_COLUMNS } from '../../auth/credentials.repository.js';
import type { Db } from '../../db/knex.js';

export type ApiKeyRecord = {
  id: string;
  organization_id: string;
  created_by: string;
  name: string;
  key_prefix: string;
  permissions: string[];
  allowed_agent_ids: string[] | null;
  allowed_ips: string[] | null;
  rate_limit_per_minute: number;
  rate_limit_per_hour: number;
  is_active: boolean;
  last_used_at: Date | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  rotated_from: string | null;
  rotated_to: string | null;
};

/** A key as the list shows it: with the names TalkPilot's dashboard clients display. */
export type ApiKeyListRecord = ApiKeyRecord & { organization_name: string; created_by_email: string | null };

export type NewApiKey = Omit<
  ApiKeyRecord,
  'id' | 'last_used_at' | 'created_at' | 'updated_at' | 'rotated_from' | 'rotated_to'
> & {
  key_hash: string;
  /** Rotation: the key this one replaces, and the rate-limit budget both spend from. */
  rotated_from?: string;
  rate_limit_budget_id?: string;
};

/** What a write may change on an existing key (rotation sets `rotated_to` on the old one). */
export type ApiKeyChanges = Partial<Omit<NewApiKey, 'rotated_from' | 'rate_limit_budget_id'>> & {
  rotated_to?: string;
};

// The hash never leaves this file: every read names the columns a response may show.
const COLUMNS = [
  'id',
  'organization_id',
  'created_by',
  'name',
  'key_prefix',
  ...KEY_GRANT_COLUMNS,
  'last_used_at',
  'expires_at',
  'created_at',
  'updated_at',
  'rotated_from',
  'rotated_to',
];

export class ApiKeyRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  async list(organizationIds: string[]): Promise<ApiKeyListRecord[]> {
    return this.db('api_keys as k')
      .join('organizations as o', 'o.id', 'k.organization_id')
      .leftJoin('users as u', 'u.id', 'k.created_by')
      .whereIn('k.organization_id', organizationIds)
      .orderBy([
        { column: 'k.created_at', order: 'desc' },
        { column: 'k.id', order: 'desc' },
      ])
      .select([...COLUMNS.map((c) => `k.${c}`), 'o.name as organization_name', 'u.email as created_by_email']);
  }

  async find(id: string, organizationIds: string[]): Promise<ApiKeyRecord | undefined> {
    return this.db('api_keys').where({ id }).whereIn('organization_id', organizationIds).first(COLUMNS);
  }

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): ApiKeyRepository {
    return new ApiKeyRepository(trx);
  }

  /** Inside a transaction: the key's row locked for a write. */
  async findForUpdate(id: string, organizationIds: string[]): Promise<ApiKeyRecord | undefined> {
    return this.db('api_keys')
      .where({ id })
      .whereIn('organization_id', organizationIds)
      .forNoKeyUpdate()
      .first(COLUMNS);
  }

  async insert(key: NewApiKey): Promise<ApiKeyRecord> {
    const [row] = await this.db('api_keys').insert(key).returning(COLUMNS);
    return row;
  }

  async update(
    id: string,
    organizationIds: string[],
    changes: ApiKeyChanges,
    at: Date,
  ): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.db('api_keys')
      .where({ id })
      .whereIn('organization_id', organizationIds)
      .update({ ...changes, updated_at: at })
      .returning(COLUMNS);
    return row;
  }

  /** The rate-limit budget the key spends from: the first key of its rotation chain. */
  async rateLimitBudget(id: string): Promise<string> {
    const row: { budget: string } = await this.db('api_keys')
      .where({ id })
      .first(this.db.raw('coalesce(rate_limit_budget_id, id) AS budget'));
    return row.budget;
  }

  async delete(id: string, organizationIds: string[]): Promise<boolean> {
    return (await this.db('api_keys').where({ id }).whereIn('organization_id', organizationIds).delete()) > 0;
  }

  /** Which of `agentIds` exist in `organizationIds`. */
  async existingAgentIds(agentIds: string[], organizationIds: string[]): Promise<Set<string>> {
    if (agentIds.length === 0) return new Set();
    const rows: { id: string }[] = await this.db('agents')
      .whereIn('id', agentIds)
      .whereIn('organization_id', organizationIds)
      .select('id');
    return new Set(rows.map((r) => r.id));
  }
}
