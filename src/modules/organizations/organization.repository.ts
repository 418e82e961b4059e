import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';

export type OrganizationRow = {
  id: string;
  name: string;
  auto_delete_done_calls: boolean;
  notdienst_bereiche: string[];
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = ['id', 'name', 'auto_delete_done_calls', 'notdienst_bereiche', 'created_at', 'updated_at'];

export class OrganizationRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  async listByIds(ids: string[]): Promise<OrganizationRow[]> {
    if (ids.length === 0) return [];
    return this.db('organizations')
      .whereIn('id', ids)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(COLUMNS);
  }

  async findById(id: string): Promise<OrganizationRow | undefined> {
    return this.db('organizations').where({ id }).first(COLUMNS);
  }

  async update(
    id: string,
    fields: Partial<Pick<OrganizationRow, 'auto_delete_done_calls' | 'notdienst_bereiche' | 'updated_at'>>,
  ): Promise<OrganizationRow | undefined> {
    const [row] = await this.db('organizations').where({ id }).update(fields).returning(COLUMNS);
    return row;
  }
}
