import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { CallRepository } from '../modules/calls/call.repository.js';
import type { JobQueue } from './queue.js';
import type { BackgroundWorker } from './workers.js';
import { RETENTION_QUEUE } from './queue-definitions.js';

const BATCH_SIZE = 1000;

/** Purges the personal data of calls older than their agent's retention_days (null = 90). */
export class CallRetention {
  constructor(
    private readonly calls: CallRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** One full pass, in batches; returns how many calls were purged. Tests call it directly. */
  async run(now: Date = this.clock.now()): Promise<number> {
    let total = 0;
    for (;;) {
      const purged = await this.calls.purgeExpired(now, BATCH_SIZE);
      total += purged;
      if (purged < BATCH_SIZE) break;
    }
    if (total > 0) this.logger.info({ calls: total }, 'call retention: personal data purged');
    return total;
  }
}

/** Runs the retention pass hourly through a pg-boss schedule (one instance takes each run). */
export class CallRetentionWorker implements BackgroundWorker {
  readonly name = 'call-retention';

  constructor(
    private readonly queue: JobQueue,
    private readonly retention: CallRetention,
  ) {}

  async start(): Promise<void> {
    await this.queue.boss.schedule(RETENTION_QUEUE, '17 * * * *');
    await this.queue.work(RETENTION_QUEUE, async () => {
      await this.retention.run();
    });
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(RETENTION_QUEUE);
  }
}
