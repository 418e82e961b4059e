import type { JobQueue } from './queue.js';
import type { BackgroundWorker } from './workers.js';

/**
 * A pass that pg-boss runs on a cron schedule: the schedule is stored in the database, so one
 * instance takes each run however many are up. Tests call `run` directly.
 */
export class ScheduledWorker<T = unknown> implements BackgroundWorker {
  constructor(
    readonly name: string,
    protected readonly queue: JobQueue,
    private readonly schedule: { queue: string; cron: string },
    private readonly pass: () => Promise<T>,
  ) {}

  /** One scheduled run. */
  run(): Promise<T> {
    return this.pass();
  }

  async start(): Promise<void> {
    await this.queue.boss.schedule(this.schedule.queue, this.schedule.cron);
    await this.queue.work(this.schedule.queue, async () => {
      await this.run();
    });
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(this.schedule.queue);
  }
}

/**
 * Runs `batch(size)` until one handles fewer than `size` rows, so no statement runs long; returns
 * how many rows they handled together.
 */
export async function inBatches(size: number, batch: (size: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await batch(size);
    total += handled;
    if (handled < size) return total;
  }
}
