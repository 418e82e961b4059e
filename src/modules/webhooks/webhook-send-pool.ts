import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { inTransaction, type Db } from '../../db/knex.js';
import type { JobQueue } from '../../jobs/queue.js';
import { WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import type { SendJob } from './webhook-dispatcher.js';

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
};

export const DEFAULT_SEND_LIMITS: SendPoolLimits = {
  maxInFlight: 32,
  perTarget: 4,
  perTargetWaiting: 8,
  pollIntervalMs: 100,
  deferSeconds: 5,
};

type Held = { job: PgBoss.Job<SendJob>; target: string };

/** Which target each delivery goes to (unknown ids are absent: the send itself skips them). */
export type TargetLookup = (deliveryIds: string[]) => Promise<Map<string, string>>;

/**
 * Runs webhook attempts in the background with no head-of-line blocking: jobs are fetched in
 * batches as slots free up (not one per poll), each attempt is completed on its own, and a target
 * that answers slowly or never holds at most `perTarget` slots. Its further jobs wait in memory up to
 * `perTargetWaiting`, beyond that they go back on the queue (a new job with a delay, in the same
 * transaction that completes the old one), so one hanging receiver cannot starve the others.
 */
export class WebhookSendPool {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Held[]>();
  private readonly active = new Set<Promise<void>>();
  private total = 0;

  constructor(
    private readonly db: Db,
    private readonly queue: JobQueue,
    private readonly targets: TargetLookup,
    private readonly send: (job: SendJob, jobId: string) => Promise<void>,
    private readonly logger: Logger,
    private readonly limits: SendPoolLimits = DEFAULT_SEND_LIMITS,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops fetching, puts held jobs back on the queue and waits for the attempts under way. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    const held = [...this.waiting.values()].flat();
    this.waiting.clear();
    await Promise.all(held.map((h) => this.putBack(h, 0)));
    await Promise.all(this.active);
  }

  /** Attempts in flight to `target` right now (tests and metrics). */
  inFlightTo(target: string): number {
    return this.inFlight.get(target) ?? 0;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.limits.maxInFlight - this.total;
      let fetched = 0;
      if (free > 0) {
        try {
          fetched = await this.fetchAndStart(free);
        } catch (error) {
          this.logger.warn({ err: error }, 'webhook send pool: fetch failed');
        }
      }
      // A full batch means more may be ready: ask again at once; otherwise wait for a slot or a tick.
      if (!this.running || (fetched > 0 && fetched === free)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.limits.pollIntervalMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async fetchAndStart(free: number): Promise<number> {
    const jobs = await this.queue.fetch<SendJob>(WEBHOOK_SEND_QUEUE, Math.min(free, 50));
    if (jobs.length === 0) return 0;
    const targets = await this.targets(jobs.map((j) => j.data.deliveryId));
    for (const job of jobs) {
      const held = { job, target: targets.get(job.data.deliveryId) ?? '' };
      if (this.inFlightTo(held.target) < this.limits.perTarget) this.begin(held);
      else this.hold(held);
    }
    return jobs.length;
  }

  private hold(held: Held): void {
    const list = this.waiting.get(held.target) ?? [];
    if (list.length >= this.limits.perTargetWaiting) {
      void this.putBack(held, this.limits.deferSeconds);
      return;
    }
    list.push(held);
    this.waiting.set(held.target, list);
  }

  private begin(held: Held): void {
    this.total += 1;
    this.inFlight.set(held.target, this.inFlightTo(held.target) + 1);
    const attempt = this.attempt(held).finally(() => {
      this.active.delete(attempt);
      this.total -= 1;
      const left = this.inFlightTo(held.target) - 1;
      if (left > 0) this.inFlight.set(held.target, left);
      else this.inFlight.delete(held.target);
      const next = this.waiting.get(held.target)?.shift();
      if (this.waiting.get(held.target)?.length === 0) this.waiting.delete(held.target);
      if (next) this.begin(next);
      this.wake?.();
    });
    this.active.add(attempt);
  }

  private async attempt({ job }: Held): Promise<void> {
    try {
      await this.send(job.data, job.id);
      await this.queue.complete(WEBHOOK_SEND_QUEUE, job.id);
    } catch (error) {
      this.logger.error({ err: error, job: job.id }, 'webhook send failed');
      await this.queue.fail(WEBHOOK_SEND_QUEUE, job.id, error).catch(() => {});
    }
  }

  /** The same attempt as a new job after `delaySeconds`; the old one completes in the same transaction. */
  private async putBack({ job }: Held, delaySeconds: number): Promise<void> {
    try {
      await inTransaction(this.db, async (trx) => {
        await this.queue.send(WEBHOOK_SEND_QUEUE, job.data, { trx, startAfter: delaySeconds });
        await this.queue.complete(WEBHOOK_SEND_QUEUE, job.id, trx);
      });
    } catch (error) {
      // Left active: pg-boss expires it and runs it again.
      this.logger.warn({ err: error, job: job.id }, 'webhook send pool: could not put a job back');
    }
  }
}
