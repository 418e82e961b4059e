import type { Logger } from 'pino';
import type { IdempotencyService } from './idempotency.service.js';
import { IDEMPOTENCY_CLEANUP_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import { ScheduledWorker } from '../../jobs/scheduled-worker.js';

/** Deletes expired Idempotency-Key records every hour through a pg-boss schedule (one instance per run). */
export class IdempotencyCleanupWorker extends ScheduledWorker<number> {
  constructor(
    queue: JobQueue,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
  ) {
    super('idempotency-cleanup', queue, { queue: IDEMPOTENCY_CLEANUP_QUEUE, cron: '41 * * * *' }, () => this.cleanup());
  }

  /** One pass (`run`, as scheduled or from a test). */
  private async cleanup(): Promise<number> {
    const deleted = await this.idempotency.deleteExpired();
    if (deleted > 0) this.logger.info({ deleted }, 'expired idempotency keys deleted');
    return deleted;
  }
}
