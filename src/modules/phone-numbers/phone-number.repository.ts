import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import type { PhoneNumber, Provider } from './phone-number.schemas.js';

export type PhoneNumberRow = {
  id: string;
  organization_id: string;
  number: string;
  label: string | null;
  provider: Provider | null;
  sip_credentials: string | null;
  agent_id: string | null;
  created_at: Date;
  updated_at: Date;
};

export const PHONE_NUMBER_UNIQUE = 'phone_numbers_number_unique';

/** The representation: the sealed credentials become `sip_configured`, nothing of them leaves here. */
export function toPhoneNumber(row: PhoneNumberRow): PhoneNumber {
  return {
    id: row.id,
    organization_id: row.organization_id,
    number: row.number,
    label: row.label,
    provider: row.provider,
    sip_configured: row.sip_credentials !== null,
    agent_id: row.agent_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type PhoneNumberFilters = { agent_id?: string; assigned?: 'true' | 'false' };

export class PhoneNumberRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): PhoneNumberRepository {
    return new PhoneNumberRepository(trx);
  }

  /** Oldest first, in the organizations given. */
  async list(organizationIds: readonly string[], filters: PhoneNumberFilters, page: PageParams) {
    const query = this.db('phone_numbers').whereIn('organization_id', organizationIds);
    if (filters.agent_id) query.where({ agent_id: filters.agent_id });
    if (filters.assigned === 'true') query.whereNotNull('agent_id');
    if (filters.assigned === 'false') query.whereNull('agent_id');
    return paginate<PhoneNumberRow, PhoneNumber>(
      query.select('*'),
      page,
      [
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ],
      toPhoneNumber,
    ) as Promise<Page<PhoneNumber>>;
  }

  async find(organizationIds: readonly string[], id: string): Promise<PhoneNumberRow | undefined> {
    return this.db('phone_numbers').whereIn('organization_id', organizationIds).where({ id }).first();
  }

  /** Inside a transaction: the row locked for a write. */
  async findForUpdate(organizationId: string, id: string): Promise<PhoneNumberRow | undefined> {
    return this.db('phone_numbers').where({ organization_id: organizationId, id }).forUpdate().first();
  }

  /** The number a call was placed to, in any organization (the routing answer names it). */
  async findByNumber(number: string): Promise<PhoneNumberRow | undefined> {
    return this.db('phone_numbers').where({ number }).first();
  }

  async insert(row: Omit<PhoneNumberRow, 'id' | 'agent_id'>): Promise<PhoneNumberRow> {
    const [created] = await this.db('phone_numbers')
      .insert({ ...row, agent_id: null })
      .returning('*');
    return created;
  }

  async update(organizationId: string, id: string, changes: Partial<PhoneNumberRow>): Promise<PhoneNumberRow> {
    const [row] = await this.db('phone_numbers')
      .where({ organization_id: organizationId, id })
      .update(changes)
      .returning('*');
    return row;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    return (await this.db('phone_numbers').where({ organization_id: organizationId, id }).delete()) > 0;
  }

  /** Inside a transaction: the agent's row locked (id, name), undefined when it is not of the organization. */
  async lockAgent(organizationId: string, agentId: string): Promise<{ id: string; name: string } | undefined> {
    return this.db('agents').where({ organization_id: organizationId, id: agentId }).forUpdate().first('id', 'name');
  }

  /** The agent's number released (agent_id null); the released number, if it had one. */
  async releaseAgentNumber(agentId: string, at: Date): Promise<PhoneNumberRow | undefined> {
    const [row] = await this.db('phone_numbers')
      .where({ agent_id: agentId })
      .update({ agent_id: null, updated_at: at })
      .returning('*');
    return row;
  }

  /** The read-side copy of the assigned number on the agent (`agents.phone_number`). */
  async copyToAgent(organizationId: string, agentId: string, number: string, at: Date): Promise<void> {
    await this.db('agents')
      .where({ organization_id: organizationId, id: agentId })
      .update({ phone_number: number, updated_at: at });
  }
}
