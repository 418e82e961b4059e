import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';

export type OrganizationRecord = {
  id: string;
  name: string;
  auto_delete_done_calls: boolean;
  cascade_done_same_number: boolean;
  calendar_status_update: boolean;
  forward_call_email: boolean;
  transfer_popup_enabled: boolean;
  notdienst_bereiche: string[];
  max_concurrent_calls: number | null;
  concurrency_overflow_number: string | null;
  require_if_match: boolean;
  call_retention_days: number;
  created_at: Date;
  updated_at: Date;
};

/** As the API shows it: no emergency-duty areas is null (one emergency service for everything). */
export type OrganizationRow = Omit<OrganizationRecord, 'notdienst_bereiche'> & { notdienst_bereiche: string[] | null };

export type OrganizationChanges = Partial<
  Pick<
    OrganizationRecord,
    | 'auto_delete_done_calls'
    | 'cascade_done_same_number'
    | 'calendar_status_update'
    | 'forward_call_email'
    | 'transfer_popup_enabled'
    | 'notdienst_bereiche'
    | 'require_if_match'
    | 'call_retention_days'
    | 'updated_at'
  >
>;

const COLUMNS = [
  'id',
  'name',
  'auto_delete_done_calls',
  'cascade_done_same_number',
  'calendar_status_update',
  'forward_call_email',
  'transfer_popup_enabled',
  'notdienst_bereiche',
  'max_concurrent_calls',
  'concurrency_overflow_number',
  'require_if_match',
  'call_retention_days',
  'created_at',
  'updated_at',
];

function toOrganization(row: OrganizationRecord): OrganizationRow {
  return { ...row, notdienst_bereiche: row.notdienst_bereiche.length > 0 ? row.notdienst_bereiche : null };
}

export class OrganizationRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): OrganizationRepository {
    return new OrganizationRepository(trx);
  }

  /** Inside a transaction: the row locked for a write. */
  async findForUpdate(id: string): Promise<OrganizationRow | undefined> {
    const row: OrganizationRecord | undefined = await this.db('organizations')
      .where({ id })
      .forNoKeyUpdate()
      .first(COLUMNS);
    return row && toOrganization(row);
  }

  async listByIds(ids: string[]): Promise<OrganizationRow[]> {
    if (ids.length === 0) return [];
    const rows: OrganizationRecord[] = await this.db('organizations')
      .whereIn('id', ids)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(COLUMNS);
    return rows.map(toOrganization);
  }

  async findById(id: string): Promise<OrganizationRow | undefined> {
    const row: OrganizationRecord | undefined = await this.db('organizations').where({ id }).first(COLUMNS);
    return row && toOrganization(row);
  }

  /** The home organization of an API key (older clients PATCH /v1/organization without an id). */
  async homeOfApiKey(keyId: string): Promise<string | undefined> {
    const row: { organization_id: string } | undefined = await this.db('api_keys')
      .where({ id: keyId })
      .first('organization_id');
    return row?.organization_id;
  }

  async update(id: string, fields: OrganizationChanges): Promise<OrganizationRow | undefined> {
    const [row]: OrganizationRecord[] = await this.db('organizations').where({ id }).update(fields).returning(COLUMNS);
    return row && toOrganization(row);
  }
}

/**
 * Whether the organization asks every write for `If-Match`, read in the caller's transaction (the
 * `RequiresIfMatch` of src/api/write-preconditions.ts). A function rather than a method: every
 * module's writes call it with their own `trx`, and no repository is made per write for it.
 */
export async function requiresIfMatch(trx: Knex | Knex.Transaction, organizationId: string): Promise<boolean> {
  const row: { require_if_match: boolean } | undefined = await trx('organizations')
    .where({ id: organizationId })
    .first('require_if_match');
  return row?.require_if_match === true;
}
