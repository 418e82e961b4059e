import type { Logger } from 'pino';
import type { AuditLogRepository } from '../../audit/audit-log.repository.js';
import type { Clock } from '../../clock.js';
import type { PartitionMaintenance } from '../../db/partitions.js';
import { AUDIT_RETENTION_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { BackgroundWorker } from '../../jobs/workers.js';

const BATCH_SIZE = 1000;
const DAY_MS = 86_400_000;

/**
 * Deletes audit entries older than AUDIT_RETENTION_DAYS: whole months past it by dropping their
 * partitions (one statement each), the rest in batches so no statement runs long.
 */
export class AuditRetention {
  constructor(
    private readonly entries: AuditLogRepository,
    private readonly retentionDays: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly partitions?: PartitionMaintenance,
  ) {}

  /** One full pass; returns how many entries were deleted row by row. Tests call it directly. */
  async run(now: Date = this.clock.now()): Promise<number> {
    const before = new Date(now.getTime() - this.retentionDays * DAY_MS);
    await this.partitions?.dropMonthsBefore('audit_log', before);
    let total = 0;
    for (;;) {
      const deleted = await this.entries.purgeBefore(before, BATCH_SIZE);
      total += deleted;
      if (deleted < BATCH_SIZE) break;
    }
    if (total > 0) this.logger.info({ audit_entries: total }, 'audit retention: old entries deleted');
    return total;
  }
}

/** Runs the pass daily through a pg-boss schedule (one instance takes each run). */
export class AuditRetentionWorker implements BackgroundWorker {
  readonly name = 'audit-retention';

  constructor(
    private readonly queue: JobQueue,
    private readonly retention: AuditRetention,
  ) {}

  async start(): Promise<void> {
    await this.queue.boss.schedule(AUDIT_RETENTION_QUEUE, '43 3 * * *');
    await this.queue.work(AUDIT_RETENTION_QUEUE, async () => {
      await this.retention.run();
    });
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(AUDIT_RETENTION_QUEUE);
  }
}
