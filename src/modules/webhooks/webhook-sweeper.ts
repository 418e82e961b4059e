import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { JobQueue } from '../../jobs/queue.js';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SWEEP_QUEUE } from '../../jobs/queue-definitions.js';
import { inBatches, ScheduledWorker } from '../../jobs/scheduled-worker.js';
import type { WebhookSweepRepository } from './webhook-sweep.repository.js';

/** An event younger than this may still be on its way to its first dispatch; it is left alone. */
const MIN_AGE_MS = 60_000;
const BATCH_SIZE = 500;

/**
 * Re-dispatches events that were recorded but never turned into deliveries because their dispatch
 * job gave up (for instance after a database outage longer than its retries). Safe to run any
 * number of times, on any number of instances: an event with a live dispatch job is skipped, and
 * dispatching locks the event and does nothing once it is marked dispatched, so no receiver ever
 * gets an event twice from this.
 */
export class WebhookSweeper {
  constructor(
    private readonly events: WebhookSweepRepository,
    private readonly queue: JobQueue,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** One pass; returns how many events were queued for dispatch again. */
  async run(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - MIN_AGE_MS);
    const total = await inBatches(BATCH_SIZE, async (limit) => {
      const ids = await this.events.findOrphanedEvents(before, limit);
      for (const eventId of ids) await this.queue.send(EVENT_DISPATCH_QUEUE, { eventId });
      return ids.length;
    });
    if (total > 0) this.logger.warn({ events: total }, 'webhook events re-dispatched by the sweeper');
    return total;
  }
}

/** Runs the sweep every minute through a pg-boss schedule (one instance takes each run). */
export class WebhookSweepWorker extends ScheduledWorker<number> {
  constructor(queue: JobQueue, sweeper: WebhookSweeper) {
    super('webhook-sweep', queue, { queue: WEBHOOK_SWEEP_QUEUE, cron: '* * * * *' }, () => sweeper.run());
  }
}
