import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/knex.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';
import { PollLoop } from '../../jobs/poll-loop.js';
import type { JobQueue } from '../../jobs/queue.js';
import { WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import type { AttemptResult, PreparedSend, SendJob, WebhookDispatcher } from './webhook-dispatcher.js';

export type SendPoolLimits = {
  /** Attempts in flight in this process, all targets together. */
  maxInFlight: number;
  /** Attempts in flight to one target (an organization's receiver: organization and URL origin). */
  perTarget: number;
  /** Jobs held in memory for a busy target; more are put back on the queue for later. */
  perTargetWaiting: number;
  /** When idle, how often the queue is asked for new jobs. */
  pollIntervalMs: number;
  /** How long a job put back for a busy target waits before it is fetched again. */
  deferSeconds: number;
  /** After send jobs were queued in this process, how long to gather more before fetching. */
  lingerMs: number;
  /** Attempts recorded (and their jobs completed) in one transaction, at most. */
  recordBatch: number;
  /** How long a finished attempt waits for others to be recorded with it. */
  recordLingerMs: number;
};

export const DEFAULT_SEND_LIMITS: SendPoolLimits = {
  maxInFlight: 32,
  perTarget: 4,
  perTargetWaiting: 8,
  pollIntervalMs: 100,
  deferSeconds: 5,
  lingerMs: 10,
  recordBatch: 32,
  recordLingerMs: 10,
};

/** The most jobs taken in one fetch. */
const FETCH_BATCH = 50;
/** While the database is unavailable, attempts made are recorded again after this long, doubling. */
const RECORD_RETRY_MIN_MS = 100;
const RECORD_RETRY_MAX_MS = 1000;

type Held = { job: PgBoss.Job<SendJob>; send: PreparedSend; target: string };
type Finished = { result: AttemptResult; done: () => void };

/** The steps of a send the pool runs (WebhookDispatcher's). */
export type SendSteps = Pick<WebhookDispatcher, 'prepare' | 'attempt' | 'record'>;

/**
 * Runs webhook attempts in the background with no head-of-line blocking: jobs are fetched in
 * batches as slots free up (not one per poll) and read for the whole batch in one go, each attempt
 * runs on its own, and a target that answers slowly or never holds at most `perTarget` slots. Its
 * further jobs wait in memory up to `perTargetWaiting`, beyond that they go back on the queue (a new
 * job with a delay, in the same transaction that completes the old one), so one hanging receiver
 * cannot starve the others. Finished attempts are recorded in small batches, each attempt in the
 * same transaction that completes its job.
 */
export class WebhookSendPool {
  private readonly loop: PollLoop;
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Held[]>();
  private readonly active = new Set<Promise<void>>();
  private finished: Finished[] = [];
  private recordTimer: NodeJS.Timeout | undefined;
  /** The wait before recording again after the database was unavailable; 0 after a success. */
  private recordRetryMs = 0;
  private total = 0;
  /** Attempts made but not recorded yet (they hold no slot, but bound how far the pool runs ahead). */
  private unrecorded = 0;
  private full = false;
  /** Set as `stop` begins: a freed slot no longer starts a held job, which `stop` puts back instead. */
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly queue: JobQueue,
    private readonly steps: SendSteps,
    private readonly logger: Logger,
    private readonly limits: SendPoolLimits = DEFAULT_SEND_LIMITS,
  ) {
    this.loop = new PollLoop(
      () => this.fetchAndStart(),
      { intervalMs: limits.pollIntervalMs, lingerMs: limits.lingerMs },
      (error) => this.logger.warn({ err: error }, 'webhook send pool: fetch failed'),
    );
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  /** Send jobs were queued: fetch soon rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /** Stops fetching, puts held jobs back on the queue and waits for the attempts under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
    const held = [...this.waiting.values()].flat();
    this.waiting.clear();
    await this.putBack(held, 0);
    // Attempts waiting for the database to come back get one last try now (see `flush`).
    if (this.finished.length > 0) await this.flush();
    await Promise.all(this.active);
  }

  /** Attempts in flight to `target` right now (tests and metrics). */
  inFlightTo(target: string): number {
    return this.inFlight.get(target) ?? 0;
  }

  /** Fetches up to the free slots and starts them; true when the batch was full (more may be ready). */
  private async fetchAndStart(): Promise<boolean> {
    const free = Math.min(
      this.limits.maxInFlight - this.total,
      2 * this.limits.maxInFlight - this.total - this.unrecorded,
      FETCH_BATCH,
    );
    this.full = free <= 0;
    if (this.full) return false;
    const jobs = await this.queue.fetch<SendJob>(WEBHOOK_SEND_QUEUE, free);
    if (jobs.length === 0) return false;
    const failed = new Set<string>();
    const prepared = await this.prepare(jobs, failed);
    const byJob = new Map(prepared.map((send) => [send.jobId, send]));
    const overflow: Held[] = [];
    for (const job of jobs) {
      const send = byJob.get(job.id);
      if (!send) continue;
      const held = { job, send, target: targetOf(send) };
      if (this.inFlightTo(held.target) < this.limits.perTarget) this.begin(held);
      else if (!this.hold(held)) overflow.push(held);
    }
    await this.putBack(overflow, this.limits.deferSeconds);
    // A job whose delivery is gone or whose attempt is recorded already has nothing left to do.
    await this.queue.complete(
      WEBHOOK_SEND_QUEUE,
      jobs.filter((j) => !byJob.has(j.id) && !failed.has(j.id)).map((j) => j.id),
    );
    return jobs.length === free;
  }

  /**
   * Reads what a batch of jobs needs in one go. When that fails (other than for want of the
   * database), each job is read on its own, so one
   * that cannot be read (it fails, nothing was sent, and it runs again after the queue's retry
   * delay) does not hold up the others; the failed ones are added to `failed`.
   */
  private async prepare(jobs: PgBoss.Job<SendJob>[], failed: Set<string>): Promise<PreparedSend[]> {
    try {
      return await this.steps.prepare(jobs);
    } catch (error) {
      if (jobs.length > 1 && !isDatabaseUnavailable(error)) {
        const prepared: PreparedSend[] = [];
        for (const job of jobs) prepared.push(...(await this.prepare([job], failed)));
        return prepared;
      }
      const ids = jobs.map((j) => j.id);
      this.logger.error({ err: error, jobs: ids }, 'webhook send failed');
      for (const id of ids) failed.add(id);
      await this.queue.fail(WEBHOOK_SEND_QUEUE, ids, error).catch(() => {});
      return [];
    }
  }

  /** Keeps a job for a busy target in memory; false when its waiting list is full (put it back). */
  private hold(held: Held): boolean {
    const list = this.waiting.get(held.target) ?? [];
    if (list.length >= this.limits.perTargetWaiting) return false;
    // The secret read with the batch may be stale by the time a held job starts: read it then.
    held.send.secret = undefined;
    list.push(held);
    this.waiting.set(held.target, list);
    return true;
  }

  /**
   * Starts an attempt. Its slots (the pool's and the target's) are free again as soon as the request
   * is over; recording it follows in a batch.
   */
  private begin(held: Held): void {
    this.total += 1;
    this.inFlight.set(held.target, this.inFlightTo(held.target) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = this.inFlightTo(held.target) - 1;
      if (left > 0) this.inFlight.set(held.target, left);
      else this.inFlight.delete(held.target);
      // While stopping, the target's held jobs stay where `stop` collects them once fetching has ended.
      const next = this.stopping ? undefined : this.waiting.get(held.target)?.shift();
      if (this.waiting.get(held.target)?.length === 0) this.waiting.delete(held.target);
      if (next) this.begin(next);
      // A slot is free again: a pool that had none fetches now.
      if (this.full) this.loop.wake();
    };
    const attempt = this.attempt(held, release).finally(() => {
      release();
      this.active.delete(attempt);
    });
    this.active.add(attempt);
  }

  /** Makes the attempt, calls `requestOver`, and waits until it is recorded and its job completed (or failed). */
  private async attempt({ job, send }: Held, requestOver: () => void): Promise<void> {
    let result: AttemptResult;
    try {
      result = await this.steps.attempt(send);
    } catch (error) {
      this.logger.error({ err: error, job: job.id }, 'webhook send failed');
      await this.queue.fail(WEBHOOK_SEND_QUEUE, job.id, error).catch(() => {});
      return;
    }
    this.unrecorded += 1;
    requestOver();
    await new Promise<void>((done) => {
      this.finished.push({ result, done });
      if (this.finished.length >= this.limits.recordBatch) void this.flush();
      else this.recordTimer ??= setTimeout(() => void this.flush(), this.limits.recordLingerMs);
    });
  }

  /**
   * Records the finished attempts in one transaction that also completes their jobs. When that
   * fails, each is tried on its own, so one that cannot be recorded does not hold up the others; a
   * job whose attempt cannot be recorded fails and runs again (the receiver may get the event twice,
   * with the same webhook-id).
   *
   * When the database is unavailable the attempts are kept and recorded once it is back (tried
   * again after 100 ms, doubling to 1 s): the receiver has the request, and failing the job would
   * send it again when it expires, with the first send never in the log. Only a stopping pool gives
   * up on them (their jobs fail, or expire, and run again).
   */
  private async flush(): Promise<void> {
    clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    const batch = this.finished;
    this.finished = [];
    if (batch.length === 0) return;
    const record = (items: Finished[]) =>
      this.steps.record(
        items.map((f) => f.result),
        (trx) =>
          this.queue.complete(
            WEBHOOK_SEND_QUEUE,
            items.map((f) => f.result.send.jobId),
            trx,
          ),
      );
    try {
      await record(batch);
      this.recordRetryMs = 0;
    } catch (error) {
      if (isDatabaseUnavailable(error) && !this.stopping) {
        const first = this.recordRetryMs === 0;
        this.recordRetryMs = Math.min(Math.max(2 * this.recordRetryMs, RECORD_RETRY_MIN_MS), RECORD_RETRY_MAX_MS);
        // Once per outage at warn; the retries themselves only at debug.
        this.logger[first ? 'warn' : 'debug'](
          { err: error, jobs: batch.length, retry_in_ms: this.recordRetryMs },
          'webhook send pool: database unavailable, attempts made are recorded when it is back',
        );
        this.finished.unshift(...batch);
        clearTimeout(this.recordTimer);
        this.recordTimer = setTimeout(() => void this.flush(), this.recordRetryMs);
        return;
      }
      if (isDatabaseUnavailable(error)) {
        // Nothing can be recorded now: the jobs fail (or, without the database, expire) and run again.
        const ids = batch.map((f) => f.result.send.jobId);
        this.logger.error({ err: error, jobs: ids }, 'webhook send failed');
        await this.queue.fail(WEBHOOK_SEND_QUEUE, ids, error).catch(() => {});
      } else {
        for (const item of batch) {
          try {
            await record([item]);
          } catch (error) {
            const jobId = item.result.send.jobId;
            this.logger.error({ err: error, job: jobId }, 'webhook send failed');
            await this.queue.fail(WEBHOOK_SEND_QUEUE, jobId, error).catch(() => {});
          }
        }
      }
    }
    this.unrecorded -= batch.length;
    for (const item of batch) item.done();
    if (this.full) this.loop.wake();
  }

  /** The same attempts as new jobs after `delaySeconds`; the old ones complete in the same transaction. */
  private async putBack(held: Held[], delaySeconds: number): Promise<void> {
    if (held.length === 0) return;
    try {
      await inTransaction(this.db, async (trx) => {
        await this.queue.sendMany(
          WEBHOOK_SEND_QUEUE,
          held.map((h) => h.job.data),
          { trx, startAfterSeconds: delaySeconds },
        );
        await this.queue.complete(
          WEBHOOK_SEND_QUEUE,
          held.map((h) => h.job.id),
          trx,
        );
      });
    } catch (error) {
      // Left active: pg-boss expires them and runs them again.
      this.logger.warn({ err: error, jobs: held.length }, 'webhook send pool: could not put jobs back');
    }
  }
}

/** The receiver a send goes to (organization and URL origin): what per-target limits count. */
function targetOf({ delivery }: PreparedSend): string {
  let origin: string;
  try {
    origin = new URL(delivery.target_url).origin;
  } catch {
    origin = delivery.target_url;
  }
  return `${delivery.organization_id} ${origin}`;
}
