import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { CONSENT_EXPIRY_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import { inBatches, ScheduledWorker } from '../../jobs/scheduled-worker.js';
import type { OutboundRepository } from './outbound.repository.js';

const BATCH_SIZE = 1000;

/**
 * Deletes consent records whose keep_until has passed (five years after the last call to their
 * number, or after their creation when none was placed), in batches so no statement runs long.
 */
export class ConsentExpiry {
  constructor(
    private readonly outbound: OutboundRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** One full pass; returns how many records were deleted. Tests call it directly. */
  async run(now: Date = this.clock.now()): Promise<number> {
    const total = await inBatches(BATCH_SIZE, (limit) => this.outbound.deleteExpiredConsents(now, limit));
    if (total > 0) this.logger.info({ consent_records: total }, 'outbound: expired consent records deleted');
    return total;
  }
}

/** Runs the pass daily through a pg-boss schedule (one instance takes each run). */
export class ConsentExpiryWorker extends ScheduledWorker<number> {
  constructor(queue: JobQueue, expiry: ConsentExpiry) {
    super('outbound-consent-expiry', queue, { queue: CONSENT_EXPIRY_QUEUE, cron: '23 4 * * *' }, () => expiry.run());
  }
}
