import type { Clock } from '../clock.js';
import type { PartitionMaintenance } from '../db/partitions.js';
import { PARTITIONS_QUEUE } from './queue-definitions.js';
import type { JobQueue } from './queue.js';
import type { BackgroundWorker } from './workers.js';

/**
 * Keeps the monthly partitions ahead (src/db/partitions.ts): once when the workers start (in the
 * background), then every 6 hours through a pg-boss schedule (one instance takes each run). Runs at start on several
 * instances wait for each other on the tables' advisory locks and find the work done.
 */
export class PartitionWorker implements BackgroundWorker {
  readonly name = 'partitions';

  constructor(
    private readonly queue: JobQueue,
    private readonly partitions: PartitionMaintenance,
    private readonly clock: Clock,
  ) {}

  private first: Promise<void> | undefined;

  async start(): Promise<void> {
    // In the background: the start neither waits for it nor fails for it (a default partition takes
    // the writes meanwhile, the schedule retries).
    this.first = this.partitions.ensureOrLog(this.clock.now());
    await this.queue.boss.schedule(PARTITIONS_QUEUE, '11 */6 * * *');
    await this.queue.work(PARTITIONS_QUEUE, async () => {
      await this.partitions.ensure(this.clock.now());
    });
  }

  async stop(): Promise<void> {
    await this.first;
    await this.queue.boss.offWork(PARTITIONS_QUEUE);
  }
}
