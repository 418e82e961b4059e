import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { CONSENT_EXPIRY_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import { inBatches, ScheduledWorker } from '../../jobs/scheduled-worker.js';
import type { OutboundRepository } from './outbound.repository.js';

const BATCH_SIZE = 1000;

/**
 * Deletes, daily through a pg-boss schedule (one instance takes each run), the consent records
 * whose keep_until has passed: five years after the last call to their number, or after their
 * creation while none was placed. In batches, so no statement runs long. Tests call `run`.
 */
export class ConsentExpiryWorker extends ScheduledWorker<number> {
  constructor(
    queue: JobQueue,
    private readonly outbound: OutboundRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    super('outbound-consent-expiry', queue, { queue: CONSENT_EXPIRY_QUEUE, cron: '23 4 * * *' }, () => this.expire());
  }

  private async expire(): Promise<number> {
    const now = this.clock.now();
    const deleted = await inBatches(BATCH_SIZE, (limit) => this.outbound.deleteExpiredConsents(now, limit));
    if (deleted > 0) this.logger.info({ consent_records: deleted }, 'outbound: expired consent records deleted');
    return deleted;
  }
}
