import type { Knex } from 'knex';
import { EVENT_DISPATCH_QUEUE } from '../jobs/queue-definitions.js';
import type { JobQueue } from '../jobs/queue.js';

export const EVENT_TYPES = ['call.completed', 'employee.forwarding_created'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export type NewEvent = {
  organization_id: string;
  agent_id: string | null;
  type: EventType;
  /** The body the receivers get, exactly as it will be sent. */
  payload: Record<string, unknown>;
};

/**
 * Records an event in the transaction of the change that caused it, and enqueues its dispatch in
 * the same transaction: both commit, or neither does.
 */
export class EventRecorder {
  constructor(private readonly queue: JobQueue) {}

  async record(trx: Knex.Transaction, event: NewEvent): Promise<string> {
    const [row] = await trx('events').insert(event).returning(['id']);
    await this.queue.send(EVENT_DISPATCH_QUEUE, { eventId: row.id }, { trx });
    return row.id as string;
  }
}
