import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { GreetingContact } from './greeting.js';

export type CallerContact = GreetingContact & { id: string };

/** The caller's contact as greetings read it (the contacts resource owns the table). */
export class GreetingContactRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The most recently updated contact of the agent with `phone` as any of its three numbers. */
  async findByPhone(agentId: string, organizationId: string, phone: string): Promise<CallerContact | undefined> {
    return this.db('contacts')
      .where({ agent_id: agentId, organization_id: organizationId })
      .andWhere((q) => q.where('phone_number', phone).orWhere('mobile_number', phone).orWhere('landline_number', phone))
      .orderBy([
        { column: 'updated_at', order: 'desc' },
        { column: 'id', order: 'asc' },
      ])
      .first('id', 'first_name', 'last_name', 'salutation', 'tags');
  }
}
