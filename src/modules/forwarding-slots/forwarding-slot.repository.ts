import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { SlotInput } from './forwarding-slot.schemas.js';

export type ForwardingSlot = SlotInput & { id: string; agent_id: string; created_at: Date; updated_at: Date };

export const SLOTNUMMER_UNIQUE = 'forwarding_slots_agent_slotnummer_unique';

const COLUMNS = [
  'id',
  'agent_id',
  'slotnummer',
  'cases',
  'slot_belegung',
  'prioritaet_1',
  'prioritaet_2',
  'prioritaet_3',
  'kunde',
  'created_at',
  'updated_at',
];

const ORDER = [
  { column: 'slotnummer', order: 'asc' as const },
  { column: 'id', order: 'asc' as const },
];

export class ForwardingSlotRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): ForwardingSlotRepository {
    return new ForwardingSlotRepository(trx);
  }

  /**
   * Inside a transaction: waits until no other write to this agent's slots is in progress, and
   * holds the lock until commit. Every slot write takes it, so a replacement is never interleaved.
   */
  async lock(agentId: string): Promise<void> {
    await this.db.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [`forwarding_slots:${agentId}`]);
  }

  async list(agentId: string): Promise<ForwardingSlot[]> {
    return this.db('forwarding_slots').where({ agent_id: agentId }).orderBy(ORDER).select(COLUMNS);
  }

  async find(agentId: string, id: string): Promise<ForwardingSlot | undefined> {
    return this.db('forwarding_slots').where({ agent_id: agentId, id }).first(COLUMNS);
  }

  async slotnummerTaken(agentId: string, slotnummer: string, exceptId?: string): Promise<boolean> {
    const query = this.db('forwarding_slots').where({ agent_id: agentId, slotnummer });
    if (exceptId) query.whereNot({ id: exceptId });
    return (await query.first('id')) !== undefined;
  }

  async insert(agentId: string, slot: SlotInput, at: Date): Promise<ForwardingSlot> {
    const [row] = await this.db('forwarding_slots')
      .insert({ ...slot, agent_id: agentId, created_at: at, updated_at: at })
      .returning(COLUMNS);
    return row;
  }

  async update(
    agentId: string,
    id: string,
    changes: Partial<SlotInput>,
    at: Date,
  ): Promise<ForwardingSlot | undefined> {
    const [row] = await this.db('forwarding_slots')
      .where({ agent_id: agentId, id })
      .update({ ...changes, updated_at: at })
      .returning(COLUMNS);
    return row;
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return (await this.db('forwarding_slots').where({ agent_id: agentId, id }).delete()) > 0;
  }

  /** Deletes every slot of the agent and inserts `slots`; returns the new slots and how many went. */
  async replaceAll(
    agentId: string,
    slots: SlotInput[],
    at: Date,
  ): Promise<{ data: ForwardingSlot[]; replaced_count: number }> {
    const replaced = await this.db('forwarding_slots').where({ agent_id: agentId }).delete();
    if (slots.length > 0) {
      await this.db('forwarding_slots').insert(
        slots.map((s) => ({ ...s, agent_id: agentId, created_at: at, updated_at: at })),
      );
    }
    return { data: await this.list(agentId), replaced_count: replaced };
  }
}
