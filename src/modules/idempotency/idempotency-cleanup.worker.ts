import type { Logger } from 'pino';
import type { IdempotencyService } from './idempotency.service.js';
import { IDEMPOTENCY_CLEANUP_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { BackgroundWorker } from '../../jobs/workers.js';

/** Deletes expired Idempotency-Key records every hour through a pg-boss schedule (one instance per run). */
export class IdempotencyCleanupWorker implements BackgroundWorker {
  readonly name = 'idempotency-cleanup';

  constructor(
    private readonly queue: JobQueue,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.queue.boss.schedule(IDEMPOTENCY_CLEANUP_QUEUE, '41 * * * *');
    await this.queue.work(IDEMPOTENCY_CLEANUP_QUEUE, async () => {
      await this.run();
    });
  }

  /** One pass; the scheduled job and tests call it. */
  async run(): Promise<number> {
    const deleted = await this.idempotency.deleteExpired();
    if (deleted > 0) this.logger.info({ deleted }, 'expired idempotency keys deleted');
    return deleted;
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(IDEMPOTENCY_CLEANUP_QUEUE);
  }
}
