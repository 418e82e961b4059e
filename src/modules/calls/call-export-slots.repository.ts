import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/knex.js';

/** One slot held by this process: released once, renewed until then. */
export type ExportSlot = { caller: string; slot: number; holder: string };

/**
 * The export slots of every instance (call_export_slots): a caller may hold `slots` of them at once.
 * A slot is a lease in the database's time, so instances need no shared clock, and one that died
 * frees its slots when their leases run out (LEASE_SECONDS) without anyone cleaning up.
 */
export class ExportSlotRepository {
  constructor(private readonly db: Db) {}

  /** A free or expired slot of `caller`, now held; undefined when all `slots` are held. */
  async take(caller: string, slots: number, leaseSeconds: number): Promise<ExportSlot | undefined> {
    const holder = randomUUID();
    for (let slot = 0; slot < slots; slot++) {
      const { rows } = await this.db.raw(
        `INSERT INTO call_export_slots AS s (caller, slot, holder, lease_until)
         VALUES (?, ?, ?, now() + make_interval(secs => ?))
         ON CONFLICT (caller, slot) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
          WHERE s.lease_until < now()
         RETURNING slot`,
        [caller, slot, holder, leaseSeconds],
      );
      if ((rows as unknown[]).length > 0) return { caller, slot, holder };
    }
    return undefined;
  }

  /** Extends a slot still held; false when it was lost (expired and taken by another export). */
  async renew(held: ExportSlot, leaseSeconds: number): Promise<boolean> {
    const changed = await this.db('call_export_slots')
      .where(held)
      .update({ lease_until: this.db.raw('now() + make_interval(secs => ?)', [leaseSeconds]) });
    return changed > 0;
  }

  async release(held: ExportSlot): Promise<void> {
    await this.db('call_export_slots').where(held).delete();
  }

  /** Slots of `caller` held now, by any instance. */
  async held(caller: string): Promise<number> {
    const row = await this.db('call_export_slots')
      .where({ caller })
      .where('lease_until', '>=', this.db.raw('now()'))
      .count({ n: '*' })
      .first();
    return Number(row?.n ?? 0);
  }
}
