import type { Knex } from 'knex';
import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { currentForWrite, found, type AgentRef } from '../agents/agent-items.js';
import { NO_CHANGE_GUARD, type AgentChangeGuard, type CheckedWrite } from '../agents/agent-change-guard.js';
import { SLOTNUMMER_UNIQUE, type ForwardingSlot, type ForwardingSlotRepository } from './forwarding-slot.repository.js';
import {
  duplicateSlotnummern,
  ReplaceSlotsSchema,
  SlotRowSchema,
  UpdateSlotSchema,
} from './forwarding-slot.schemas.js';

const SLOT = 'Forwarding slot';

/** Every write runs in a transaction holding the agent's slot lock, so writes never interleave. */
export class ForwardingSlotService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly slots: ForwardingSlotRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    private readonly guard: AgentChangeGuard = NO_CHANGE_GUARD,
  ) {}

  /** All slots in slot order, not paginated. */
  async list(auth: AuthContext, agentId: string): Promise<{ data: ForwardingSlot[] }> {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:read');
    return { data: await this.slots.list(agent.id) };
  }

  async get(auth: AuthContext, agentId: string, slotId: string): Promise<ForwardingSlot> {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:read');
    return found(await this.slots.find(agent.id, slotId), SLOT);
  }

  async create(auth: AuthContext, agentId: string, body: unknown): Promise<ForwardingSlot> {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:write');
    const input = parseBody(SlotRowSchema, body);
    const { resource } = await this.write(agent, input.slotnummer, async (slots) => {
      if (await slots.slotnummerTaken(agent.id, input.slotnummer)) throw this.taken(input.slotnummer);
      return slots.insert(agent.id, input, this.clock.now());
    });
    return resource;
  }

  /** `If-Match` is checked against the slot under the agent's slot lock. */
  async update(auth: AuthContext, agentId: string, slotId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:write');
    found(await this.slots.find(agent.id, slotId), SLOT);
    const input = parseBody(UpdateSlotSchema, body);
    const { resource } = await this.write(agent, input.slotnummer, async (slots, trx) => {
      await currentForWrite(trx, agent, conditions, SLOT, await slots.find(agent.id, slotId));
      if (input.slotnummer !== undefined && (await slots.slotnummerTaken(agent.id, input.slotnummer, slotId))) {
        throw this.taken(input.slotnummer);
      }
      return found(await slots.update(agent.id, slotId, input, this.clock.now()), SLOT);
    });
    return resource;
  }

  /** `If-Match` is checked against the slot under the agent's slot lock. */
  async delete(auth: AuthContext, agentId: string, slotId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:write');
    await this.write(agent, undefined, async (slots, trx) => {
      await currentForWrite(trx, agent, conditions, SLOT, await slots.find(agent.id, slotId));
      if (!(await slots.delete(agent.id, slotId))) throw new NotFoundError(SLOT);
    });
  }

  /**
   * The atomic replacement: every row is validated first (all problems in one 400, nothing
   * written), then the old slots are deleted and the new ones inserted in one transaction.
   * Concurrent replacements wait for each other, so the result is always exactly one payload.
   * `If-Match` is checked against the list (`{data}`, as GET shows it) under the slot lock; a dry
   * run answers the same and stores nothing.
   */
  async replace(
    auth: AuthContext,
    agentId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<CheckedWrite<{ data: ForwardingSlot[]; replaced_count: number }>> {
    const agent = await this.access.resolve(auth, agentId, 'forwarding:write');
    const parsed = ReplaceSlotsSchema.safeParse(body ?? {});
    const details = [
      ...(parsed.success ? [] : zodIssuesToDetails(parsed.error.issues)),
      ...duplicateSlotnummern((body as { slots?: unknown } | undefined)?.slots),
    ];
    if (!parsed.success || details.length > 0) {
      throw new ValidationError('Invalid forwarding slots; nothing was changed', details.sort(bySlotIndex));
    }
    return this.write(
      agent,
      undefined,
      async (slots, trx) => {
        await currentForWrite(trx, agent, conditions, SLOT, { data: await slots.list(agent.id) });
        return slots.replaceAll(agent.id, parsed.data.slots, this.clock.now());
      },
      conditions.dryRun,
    );
  }

  /** Under the slot lock; the agent's test cases (when required) are checked against the result. */
  private async write<T>(
    agent: AgentRef,
    slotnummer: string | undefined,
    work: (slots: ForwardingSlotRepository, trx: Knex.Transaction) => Promise<T>,
    dryRun = false,
  ): Promise<CheckedWrite<T>> {
    let written: CheckedWrite<T>;
    try {
      written = await this.audited.transaction(
        async (trx) => {
          const slots = this.slots.with(trx);
          await slots.lock(agent.id);
          const resource = await work(slots, trx);
          return { resource, failingTestCases: await this.guard.check(trx, agent, dryRun) };
        },
        { dryRun },
      );
    } catch (error) {
      if (isUniqueViolation(error, SLOTNUMMER_UNIQUE)) throw this.taken(slotnummer ?? '');
      throw error;
    }
    // A routed call reads the slots: every instance's cache has dropped them when the write answers.
    if (!dryRun) await this.access.changed();
    return written;
  }

  private taken(slotnummer: string): ConflictError {
    return new ConflictError(`Slot ${slotnummer} already exists for this agent`, [
      { field: 'slotnummer', message: 'Already in use' },
    ]);
  }
}

/** Row problems in row order (`slots[2]...` before `slots[10]...`). */
function bySlotIndex(a: { field: string }, b: { field: string }): number {
  const index = (f: string) => Number(/^slots\[(\d+)\]/.exec(f)?.[1] ?? -1);
  return index(a.field) - index(b.field);
}
