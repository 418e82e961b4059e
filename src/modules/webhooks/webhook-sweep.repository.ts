import type { Db } from '../../db/knex.js';
import { EVENT_DISPATCH_QUEUE } from '../../jobs/queue-definitions.js';

/** Job states in which pg-boss will still run a job (it may be waiting for a retry). */
const LIVE_JOB_STATES = ['created', 'retry', 'active'];

/** Finds events that were recorded but never dispatched, and that no live job will dispatch. */
export class WebhookSweepRepository {
  constructor(private readonly db: Db) {}

  /**
   * Undispatched events older than `before` without a live dispatch job: the job used up its
   * retries (a long database outage), expired for good, or was lost. Oldest first, at most `limit`.
   */
  async findOrphanedEvents(before: Date, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db('events as e')
      .select('e.id')
      .whereNull('e.dispatched_at')
      .where('e.created_at', '<', before)
      .whereNotExists(
        this.db
          .select(this.db.raw('1'))
          .from('pgboss.job as j')
          .where('j.name', EVENT_DISPATCH_QUEUE)
          .whereIn('j.state', LIVE_JOB_STATES)
          .whereRaw(`j.data->>'eventId' = e.id::text`),
      )
      .orderBy('e.created_at')
      .limit(limit);
    return rows.map((r) => r.id);
  }
}
