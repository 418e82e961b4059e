import {
  assertEveryAgent,
  assertPermission,
  organizationsWith,
  reachableOrganizations,
  targetOrganization,
  type AuthContext,
} from '../../auth/auth-context.js';
import { noteAuditResource } from '../../audit/request-context.js';
import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import type { EventRecorder, PHONE_NUMBER_EVENT_TYPES } from '../../events/event-recorder.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, NotFoundError, ServiceUnavailableError, ValidationError } from '../../errors/index.js';
import type { Page } from '../../api/pagination.js';
import { parse, parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import {
  PHONE_NUMBER_UNIQUE,
  toPhoneNumber,
  type PhoneNumberRepository,
  type PhoneNumberRow,
} from './phone-number.repository.js';
import {
  CreatePhoneNumberSchema,
  ListPhoneNumbersQuery,
  UpdatePhoneNumberSchema,
  type PhoneNumber,
  type PhoneNumberInput,
} from './phone-number.schemas.js';
import type { SecretSealer } from './sealed-secret.js';

type Sip = NonNullable<PhoneNumberInput['sip']>;

function numberTaken(number: string): ConflictError {
  return new ConflictError(`The phone number ${number} is already registered`, [
    { field: 'number', message: 'Already registered (numbers are unique across the service)' },
  ]);
}

function onlyNumber(agent: { id: string; name: string }): ConflictError {
  return new ConflictError(
    `The number is the only number of agent ${agent.id} (${agent.name}); assign the agent another number first`,
    [{ field: 'agent_id', message: 'An agent always keeps one number' }],
  );
}

/**
 * Phone numbers of an organization (phone_numbers:read|write). An agent answers at exactly one
 * number: assigning a number to an agent releases the agent's previous number, and the agent's
 * `phone_number` (its read-side copy) follows in the same transaction. A number that is an agent's
 * only number is neither released nor deleted (409).
 */
export class PhoneNumberService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly numbers: PhoneNumberRepository,
    private readonly access: AgentAccess,
    private readonly sealer: SecretSealer,
    private readonly clock: Clock,
    private readonly events: EventRecorder,
  ) {}

  async list(auth: AuthContext, query: unknown): Promise<Page<PhoneNumber>> {
    assertPermission(auth, 'phone_numbers:read');
    const { page, limit, ...filters } = parse(ListPhoneNumbersQuery, query, 'Invalid query parameters');
    return this.numbers.list(organizationsWith(auth, 'phone_numbers:read'), filters, { page, limit });
  }

  async get(auth: AuthContext, numberId: string): Promise<PhoneNumber> {
    return toPhoneNumber(await this.reachable(auth, numberId, 'phone_numbers:read'));
  }

  /** The organization is `organization_id`, or the only one where the caller may write numbers. */
  async create(auth: AuthContext, body: unknown): Promise<PhoneNumber> {
    assertPermission(auth, 'phone_numbers:write');
    assertEveryAgent(auth);
    const input = parseBody(CreatePhoneNumberSchema, body);
    const organizationId = this.targetOrganization(auth, input.organization_id);
    const sealed = input.sip ? this.seal(input.sip) : null;
    const now = this.clock.now();
    const row = await this.audited.transaction(async (trx) => {
      const numbers = this.numbers.with(trx);
      const created = await numbers
        .insert({
          organization_id: organizationId,
          number: input.number,
          label: input.label ?? null,
          provider: input.provider ?? null,
          sip_credentials: sealed,
          created_at: now,
          updated_at: now,
        })
        .catch((error: unknown) => {
          throw isUniqueViolation(error, PHONE_NUMBER_UNIQUE) ? numberTaken(input.number) : error;
        });
      noteAuditResource({ organizationId, resourceId: created.id, agentId: input.agent_id ?? undefined });
      const result = input.agent_id ? await this.assign(trx, numbers, created, input.agent_id, now) : created;
      await this.record(trx, 'phone_number.created', result, now);
      return result;
    });
    if (input.agent_id) await this.access.changed();
    return toPhoneNumber(row);
  }

  /** label, provider, sip (replaced whole; null removes it), agent_id (assign, move or release). */
  async update(auth: AuthContext, numberId: string, body: unknown): Promise<PhoneNumber> {
    const current = await this.reachable(auth, numberId, 'phone_numbers:write');
    assertEveryAgent(auth);
    const input = parseBody(UpdatePhoneNumberSchema, body);
    const changes: Partial<PhoneNumberRow> = {};
    if (input.label !== undefined) changes.label = input.label;
    if (input.provider !== undefined) changes.provider = input.provider;
    if (input.sip !== undefined) changes.sip_credentials = input.sip === null ? null : this.seal(input.sip);
    const now = this.clock.now();
    const orgId = current.organization_id;
    noteAuditResource({ organizationId: orgId, resourceId: current.id });
    let agentsChanged = false;
    const changed = Object.keys(changes).length > 0;
    const row = await this.audited.transaction(async (trx) => {
      const numbers = this.numbers.with(trx);
      let locked = await this.lockNumber(numbers, orgId, numberId);
      if (changed) locked = await numbers.update(orgId, numberId, { ...changes, updated_at: now });
      let result = locked;
      if (input.agent_id !== undefined && input.agent_id !== locked.agent_id) {
        agentsChanged = true;
        if (input.agent_id === null) {
          await this.assertReleasable(numbers, locked);
          result = await numbers.update(orgId, numberId, { agent_id: null, updated_at: now });
        } else result = await this.assign(trx, numbers, locked, input.agent_id, now);
      }
      if (changed || agentsChanged) await this.record(trx, 'phone_number.updated', result, now);
      return result;
    });
    // A routed call shows the label and provider too: every instance drops the number it keeps.
    if (changed || agentsChanged) await this.access.changed();
    return toPhoneNumber(row);
  }

  /** 409 while the number is an agent's only number. */
  async delete(auth: AuthContext, numberId: string): Promise<void> {
    const current = await this.reachable(auth, numberId, 'phone_numbers:write');
    assertEveryAgent(auth);
    noteAuditResource({ organizationId: current.organization_id, resourceId: current.id });
    await this.audited.transaction(async (trx) => {
      const numbers = this.numbers.with(trx);
      const locked = await this.lockNumber(numbers, current.organization_id, numberId);
      await this.assertReleasable(numbers, locked);
      await numbers.delete(current.organization_id, numberId);
      await this.record(trx, 'phone_number.deleted', locked, this.clock.now());
    });
  }

  /**
   * Inside the transaction: `agentId` answers at `number` from now on; its previous number is
   * released and its `phone_number` copy follows. A number held by another agent is not taken from it.
   */
  private async assign(
    trx: Knex.Transaction,
    numbers: PhoneNumberRepository,
    number: PhoneNumberRow,
    agentId: string,
    at: Date,
  ): Promise<PhoneNumberRow> {
    const agent = await numbers.lockAgent(number.organization_id, agentId);
    if (!agent) {
      throw new ValidationError('Request body is invalid', [
        { field: 'agent_id', message: 'No agent of the organization has this id' },
      ]);
    }
    await this.assertReleasable(numbers, number);
    const released = await numbers.releaseAgentNumber(agent.id, at);
    if (released) await this.record(trx, 'phone_number.updated', released, at);
    const assigned = await numbers.update(number.organization_id, number.id, { agent_id: agent.id, updated_at: at });
    await numbers.copyToAgent(number.organization_id, agent.id, number.number, at);
    return assigned;
  }

  /**
   * The number's event, in the transaction of its change: an organization event (no agent), so it
   * goes to every agent URL of the organization and every member URL that chose its type.
   */
  private async record(
    trx: Knex.Transaction,
    type: (typeof PHONE_NUMBER_EVENT_TYPES)[number],
    row: PhoneNumberRow,
    at: Date,
  ): Promise<void> {
    await this.events.record(trx, {
      organization_id: row.organization_id,
      agent_id: null,
      type,
      payload: { phone_number: toPhoneNumber(row), changed_at: at.toISOString() },
    });
  }

  /** An assigned number is its agent's only one: it may not be released, moved away or deleted. */
  private async assertReleasable(numbers: PhoneNumberRepository, number: PhoneNumberRow): Promise<void> {
    if (number.agent_id === null) return;
    const holder = await numbers.lockAgent(number.organization_id, number.agent_id);
    if (holder) throw onlyNumber(holder);
  }

  private async lockNumber(numbers: PhoneNumberRepository, orgId: string, id: string): Promise<PhoneNumberRow> {
    const row = await numbers.findForUpdate(orgId, id);
    if (!row) throw new NotFoundError('Phone number');
    return row;
  }

  /** The number in an organization the caller reaches (404 otherwise), after the permission there (403). */
  private async reachable(
    auth: AuthContext,
    numberId: string,
    permission: 'phone_numbers:read' | 'phone_numbers:write',
  ) {
    assertPermission(auth, permission);
    const row = await this.numbers.find(reachableOrganizations(auth), numberId);
    if (!row) throw new NotFoundError('Phone number');
    assertPermission(auth, permission, row.organization_id);
    return row;
  }

  private targetOrganization(auth: AuthContext, requested: string | undefined): string {
    const several = 'Required when the caller can write phone numbers in several organizations';
    return targetOrganization(auth, requested, 'phone_numbers:write', several);
  }

  private seal(sip: Sip): string {
    if (!this.sealer.available)
      throw new ServiceUnavailableError('SIP credentials cannot be stored: the server has no SECRETS_KEY');
    return this.sealer.seal(JSON.stringify(sip));
  }
}
