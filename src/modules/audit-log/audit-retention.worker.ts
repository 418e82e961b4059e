import type { Logger } from 'pino';
import type { AuditLogRepository } from '../../audit/audit-log.repository.js';
import type { Clock } from '../../clock.js';
import type { PartitionMaintenance } from '../../db/partitions.js';
import { AUDIT_RETENTION_QUEUE } from '../../jobs/queue-definitions.js';
import type { JobQueue } from '../../jobs/queue.js';
import { inBatches, ScheduledWorker } from '../../jobs/scheduled-worker.js';

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
    const total = await inBatches(BATCH_SIZE, (limit) => this.entries.purgeBefore(before, limit));
    if (total > 0) this.logger.info({ audit_entries: total }, 'audit retention: old entries deleted');
    return total;
  }
}

/** Runs the pass daily through a pg-boss schedule (one instance takes each run). */
export class AuditRetentionWorker extends ScheduledWorker<number> {
  constructor(queue: JobQueue, retention: AuditRetention) {
    super('audit-retention', queue, { queue: AUDIT_RETENTION_QUEUE, cron: '43 3 * * *' }, () => retention.run());
  }
}
