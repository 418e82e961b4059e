import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';

export type ContactFields = {
  customer_name: string | null;
  salutation: string | null;
  first_name: string | null;
  last_name: string | null;
  phone_number: string | null;
  mobile_number: string | null;
  landline_number: string | null;
  email: string | null;
  address: string | null;
  company: string | null;
  tags: string[];
  note: string | null;
  customer_number: string | null;
  last_contact_date: Date | null;
  name_parsed: 'auto' | 'llm' | 'manual' | 'unclear';
  name_source: 'ai' | 'manual';
};

export type ContactRow = ContactFields & { id: string; agent_id: string; created_at: Date; updated_at: Date };

/** As the API shows it: a customer number that is a number is shown as one (TalkPilot's type). */
export type Contact = Omit<ContactRow, 'customer_number'> & { customer_number: number | string | null };

export type ContactFilters = { phone_number?: string; tag?: string; search?: string };

export const CONTACT_PHONE_UNIQUE = 'contacts_agent_phone_unique';

/** The columns a contact's representation shows (the data-subject export reads the same). */
export const CONTACT_COLUMNS = [
  'id',
  'agent_id',
  'customer_name',
  'salutation',
  'first_name',
  'last_name',
  'phone_number',
  'mobile_number',
  'landline_number',
  'email',
  'address',
  'company',
  'tags',
  'note',
  'customer_number',
  'last_contact_date',
  'name_parsed',
  'name_source',
  'created_at',
  'updated_at',
];

const SEARCHED = [
  'customer_name',
  'first_name',
  'last_name',
  'company',
  'email',
  'customer_number',
  'phone_number',
  'mobile_number',
  'landline_number',
];

const PLAIN_NUMBER = /^(0|[1-9]\d{0,15})$/;

export function toContact(row: ContactRow): Contact {
  const number = row.customer_number;
  const numeric = number !== null && PLAIN_NUMBER.test(number) && Number.isSafeInteger(Number(number));
  return { ...row, customer_number: numeric ? Number(number) : number };
}

/** The stored fields of a contact as the API showed it (to apply a change to). */
export function storedFields(contact: Contact): ContactFields {
  const { id: _id, agent_id: _agent, created_at: _c, updated_at: _u, customer_number, ...fields } = contact;
  return { ...fields, customer_number: customer_number === null ? null : String(customer_number) };
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern (backslash is PostgreSQL's default escape). */
function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class ContactRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): ContactRepository {
    return new ContactRepository(trx);
  }

  /** Newest first. */
  async list(agentId: string, filters: ContactFilters, page: PageParams): Promise<Page<Contact>> {
    const query = this.db('contacts').where({ agent_id: agentId });
    const { phone_number: phone, tag, search } = filters;
    if (phone)
      query.where((q) =>
        q.where({ phone_number: phone }).orWhere({ mobile_number: phone }).orWhere({ landline_number: phone }),
      );
    if (tag) query.whereRaw('EXISTS (SELECT 1 FROM unnest(tags) AS t(tag) WHERE lower(t.tag) = lower(?))', [tag]);
    if (search) {
      const pattern = likePattern(search);
      query.where((q) => {
        for (const column of SEARCHED) q.orWhereRaw('?? ILIKE ?', [column, pattern]);
      });
    }
    return paginate<ContactRow, Contact>(
      query.select(CONTACT_COLUMNS),
      page,
      [
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ],
      toContact,
    );
  }

  async find(agentId: string, id: string): Promise<Contact | undefined> {
    const row = await this.db('contacts').where({ agent_id: agentId, id }).first(CONTACT_COLUMNS);
    return row ? toContact(row) : undefined;
  }

  /** Inside a transaction: the row locked for a write. */
  async findForUpdate(agentId: string, id: string): Promise<Contact | undefined> {
    const row = await this.db('contacts').where({ agent_id: agentId, id }).forNoKeyUpdate().first(CONTACT_COLUMNS);
    return row ? toContact(row) : undefined;
  }

  async phoneTaken(agentId: string, phoneNumber: string, exceptId?: string): Promise<boolean> {
    const query = this.db('contacts').where({ agent_id: agentId, phone_number: phoneNumber });
    if (exceptId) query.whereNot({ id: exceptId });
    return (await query.first('id')) !== undefined;
  }

  async insert(agent: { id: string; organization_id: string }, fields: ContactFields, at: Date): Promise<Contact> {
    const [row] = await this.db('contacts')
      .insert({ ...fields, agent_id: agent.id, organization_id: agent.organization_id, created_at: at, updated_at: at })
      .returning(CONTACT_COLUMNS);
    return toContact(row);
  }

  async update(agentId: string, id: string, changes: Partial<ContactFields>, at: Date): Promise<Contact | undefined> {
    const [row] = await this.db('contacts')
      .where({ agent_id: agentId, id })
      .update({ ...changes, updated_at: at })
      .returning(CONTACT_COLUMNS);
    return row ? toContact(row) : undefined;
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return (await this.db('contacts').where({ agent_id: agentId, id }).delete()) > 0;
  }
}
