import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import type { Page } from '../../api/pagination.js';
import { parse, parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { currentForWrite, found } from '../agents/agent-items.js';
import { checkedWrite, NO_CHANGE_GUARD, type AgentChangeGuard } from '../agents/agent-change-guard.js';
import { nameParsed, nameSent, resolveNames } from './contact-rules.js';
import {
  CONTACT_PHONE_UNIQUE,
  storedFields,
  type Contact,
  type ContactFields,
  type ContactRepository,
} from './contact.repository.js';
import { CreateContactSchema, ListContactsQuery, UpdateContactSchema, type ContactInput } from './contact.schemas.js';

const EMPTY: ContactFields = {
  customer_name: null,
  salutation: null,
  first_name: null,
  last_name: null,
  phone_number: null,
  mobile_number: null,
  landline_number: null,
  email: null,
  address: null,
  company: null,
  tags: [],
  note: null,
  customer_number: null,
  last_contact_date: null,
  name_parsed: 'unclear',
  name_source: 'manual',
};

/**
 * The fields to store: the request applied to `current`, with the name rules, and phone_number
 * derived from the mobile number (preferred) or the landline whenever either is sent.
 */
function applyChanges(current: ContactFields, input: ContactInput, isNew: boolean): ContactFields {
  const changes = Object.fromEntries(
    Object.entries(input).filter(([, v]) => v !== undefined),
  ) as Partial<ContactFields>;
  const names = resolveNames(current, changes);
  const merged = { ...current, ...changes, ...names };
  if (changes.mobile_number !== undefined || changes.landline_number !== undefined) {
    merged.phone_number = merged.mobile_number ?? merged.landline_number ?? merged.phone_number;
  }
  merged.name_parsed = nameParsed(isNew ? null : current.name_parsed, changes, names);
  if (nameSent(changes)) merged.name_source = 'manual';
  return merged;
}

/** A contact must say who it is or how to reach it. */
function assertIdentifiable(contact: ContactFields): void {
  const { customer_name, first_name, last_name, company, phone_number, mobile_number, landline_number, email } =
    contact;
  if (
    ![customer_name, first_name, last_name, company, phone_number, mobile_number, landline_number, email].some(
      (v) => v !== null,
    )
  ) {
    throw new ValidationError('Request body is invalid', [
      { field: 'customer_name', message: 'A contact needs a name, a company, a phone number or an email' },
    ]);
  }
}

export class ContactService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly contacts: ContactRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    /** Contacts fill greetings and pick variants: a write is checked against the agent's required test cases. */
    private readonly guard: AgentChangeGuard = NO_CHANGE_GUARD,
  ) {}

  /** Newest first; filters `phone_number` (any of the three numbers), `tag`, `search`. */
  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<Contact>> {
    const agent = await this.access.resolve(auth, agentId, 'contacts:read');
    const { page, limit, ...filters } = parse(ListContactsQuery, query, 'Invalid query parameters');
    return this.contacts.list(agent.id, filters, { page, limit });
  }

  async get(auth: AuthContext, agentId: string, contactId: string): Promise<Contact> {
    const agent = await this.access.resolve(auth, agentId, 'contacts:read');
    return found(await this.contacts.find(agent.id, contactId), 'Contact');
  }

  async create(auth: AuthContext, agentId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.access.resolve(auth, agentId, 'contacts:write');
    const fields = applyChanges(EMPTY, parseBody(CreateContactSchema, body), true);
    assertIdentifiable(fields);
    await this.assertPhoneFree(this.contacts, agent.id, fields.phone_number);
    return checkedWrite(this.audited, this.guard, agent, conditions.dryRun, (trx) =>
      this.guardPhone(fields.phone_number, () => this.contacts.with(trx).insert(agent, fields, this.clock.now())),
    );
  }

  /** `If-Match` is checked against the locked row; a dry run answers the same and stores nothing. */
  async update(auth: AuthContext, agentId: string, contactId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.access.resolve(auth, agentId, 'contacts:write');
    found(await this.contacts.find(agent.id, contactId), 'Contact');
    const input = parseBody(UpdateContactSchema, body);
    return checkedWrite(this.audited, this.guard, agent, conditions.dryRun, async (trx) => {
      const contacts = this.contacts.with(trx);
      const locked = await contacts.findForUpdate(agent.id, contactId);
      const current = storedFields(await currentForWrite(trx, agent, conditions, 'Contact', locked));
      const fields = applyChanges(current, input, false);
      assertIdentifiable(fields);
      if (fields.phone_number !== current.phone_number)
        await this.assertPhoneFree(contacts, agent.id, fields.phone_number, contactId);
      const updated = await this.guardPhone(fields.phone_number, () =>
        contacts.update(agent.id, contactId, fields, this.clock.now()),
      );
      return found(updated, 'Contact');
    });
  }

  async delete(auth: AuthContext, agentId: string, contactId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.access.resolve(auth, agentId, 'contacts:write');
    await this.audited.transaction(async (trx) => {
      const contacts = this.contacts.with(trx);
      await currentForWrite(trx, agent, conditions, 'Contact', await contacts.findForUpdate(agent.id, contactId));
      if (!(await contacts.delete(agent.id, contactId))) throw new NotFoundError('Contact');
      await this.guard.check(trx, agent);
    });
  }

  private async assertPhoneFree(
    contacts: ContactRepository,
    agentId: string,
    phone: string | null,
    exceptId?: string,
  ): Promise<void> {
    if (phone !== null && (await contacts.phoneTaken(agentId, phone, exceptId))) throw this.phoneConflict(phone);
  }

  private phoneConflict(phone: string | null): ConflictError {
    return new ConflictError(`Another contact of this agent already has the phone number ${phone}`, [
      { field: 'phone_number', message: 'Already in use' },
    ]);
  }

  /** A concurrent request may take the number between the check and the write. */
  private async guardPhone<T>(phone: string | null, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, CONTACT_PHONE_UNIQUE)) throw this.phoneConflict(phone);
      throw error;
    }
  }
}
