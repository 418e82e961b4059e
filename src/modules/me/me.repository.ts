import type { Knex } from 'knex';
import type { Role } from '../../auth/permissions.js';
import type { Db } from '../../db/knex.js';

export type MeRow = {
  id: string;
  email: string;
  name: string;
  webhook_url: string | null;
  webhook_events: string[];
  webhook_retries: boolean;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = ['id', 'email', 'name', 'webhook_url', 'webhook_events', 'webhook_retries', 'created_at', 'updated_at'];

/** The signed-in user's own profile; every query is scoped to that user's id. */
export class MeRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): MeRepository {
    return new MeRepository(trx);
  }

  /** Inside a transaction: the user's row locked for a write. */
  async findForUpdate(userId: string): Promise<MeRow | undefined> {
    return this.db('users').where({ id: userId }).forNoKeyUpdate().first(COLUMNS);
  }

  async find(userId: string): Promise<MeRow | undefined> {
    return this.db('users').where({ id: userId }).first(COLUMNS);
  }

  async memberships(userId: string): Promise<{ organization_id: string; role: Role }[]> {
    return this.db('memberships')
      .where({ user_id: userId })
      .orderBy([{ column: 'created_at' }, { column: 'organization_id' }])
      .select('organization_id', 'role');
  }

  async update(
    userId: string,
    changes: { name?: string; webhook_url?: string | null; webhook_events?: string[]; webhook_retries?: boolean },
    at: Date,
  ): Promise<MeRow | undefined> {
    const [row] = await this.db('users')
      .where({ id: userId })
      .update({ ...changes, updated_at: at })
      .returning(COLUMNS);
    return row;
  }
}
