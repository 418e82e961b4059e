import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { CallRepository } from './call.repository.js';
import type { JobQueue } from '../../jobs/queue.js';
import { ScheduledWorker } from '../../jobs/scheduled-worker.js';
import { RETENTION_QUEUE } from '../../jobs/queue-definitions.js';

/**
 * One batch is one short UPDATE (row locks on these calls only, SKIP LOCKED); one job does at most
 * `maxBatches` of them and queues its continuation, so a backlog of a million old calls is purged in
 * many small steps that shutdown and the other queues never wait behind.
 */
export type RetentionLimits = { batchSize: number; maxBatches: number };
const DEFAULT_LIMITS: RetentionLimits = { batchSize: 500, maxBatches: 20 };

/** Purges the personal data of calls older than their agent's retention_days (null = the organization's call_retention_days). */
export class CallRetention {
  constructor(
    private readonly calls: CallRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly limits: RetentionLimits = DEFAULT_LIMITS,
  ) {}

  /**
   * Up to `maxBatches` batches, stopping early once `signal` is aborted (checked between batches).
   * `more` says whether expired calls may remain.
   */
  async runBounded(now: Date, signal?: AbortSignal): Promise<{ purged: number; more: boolean }> {
    let purged = 0;
    for (let batch = 0; batch < this.limits.maxBatches; batch++) {
      if (signal?.aborted) return this.report(purged, true);
      const n = await this.calls.purgeExpired(now, this.limits.batchSize);
      purged += n;
      if (n < this.limits.batchSize) return this.report(purged, false);
      await yieldToEventLoop();
    }
    return this.report(purged, true);
  }

  /** Everything expired, in bounded passes; returns how many calls were purged. Tests and the CLI. */
  async run(now: Date = this.clock.now()): Promise<number> {
    let total = 0;
    for (;;) {
      const { purged, more } = await this.runBounded(now);
      total += purged;
      if (!more) return total;
    }
  }

  private report(purged: number, more: boolean): { purged: number; more: boolean } {
    if (purged > 0) this.logger.info({ calls: purged, more }, 'call retention: personal data purged');
    return { purged, more };
  }
}

/** Runs the retention pass hourly through a pg-boss schedule (one instance takes each run). */
export class CallRetentionWorker extends ScheduledWorker<void> {
  private stopping = new AbortController();

  constructor(
    queue: JobQueue,
    private readonly retention: CallRetention,
    private readonly clock: Clock,
  ) {
    super('call-retention', queue, { queue: RETENTION_QUEUE, cron: '17 * * * *' }, () => this.runJob());
  }

  override async start(): Promise<void> {
    this.stopping = new AbortController();
    await super.start();
  }

  /** One job: a bounded pass, then a queued continuation while expired calls remain. */
  async runJob(): Promise<void> {
    const { more } = await this.retention.runBounded(this.clock.now(), this.stopping.signal);
    if (more && !this.stopping.signal.aborted) await this.queue.send(RETENTION_QUEUE, {});
  }

  /** The pass under way ends after its current batch; the rest waits for the next run. */
  override async stop(): Promise<void> {
    this.stopping.abort();
    await super.stop();
  }
}
