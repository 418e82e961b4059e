import type { Logger } from 'pino';
import type { Db } from '../../db/knex.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';
import { PollLoop } from '../../jobs/poll-loop.js';
import type { JobQueue } from '../../jobs/queue.js';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import type { BackgroundWorker } from '../../jobs/workers.js';
import type { DispatchJob, SendJob, WebhookDispatcher } from './webhook-dispatcher.js';
import { DEFAULT_SEND_LIMITS, WebhookSendPool, type SendPoolLimits } from './webhook-send-pool.js';

/**
 * Dispatch is database work only: each poller takes up to DISPATCH_BATCH events and dispatches them
 * in one transaction (fetching again at once after a full batch). Events recorded in this process
 * wake a poller (DISPATCH_LINGER_MS later, so that events arriving together go together); events of
 * other processes are found by polling.
 */
const DISPATCH_POLLERS = 2;
const DISPATCH_BATCH = 50;
const DISPATCH_POLL_MS = 250;
const DISPATCH_LINGER_MS = 20;

/** Runs the webhook jobs in the server process; each job is fetched by exactly one instance. */
export class WebhookWorker implements BackgroundWorker {
  readonly name = 'webhooks';
  readonly pool: WebhookSendPool;
  private readonly pollers: PollLoop[] = [];
  private unsubscribe: (() => void)[] = [];

  constructor(
    db: Db,
    private readonly queue: JobQueue,
    readonly dispatcher: WebhookDispatcher,
    private readonly logger: Logger,
    limits: SendPoolLimits = DEFAULT_SEND_LIMITS,
  ) {
    this.pool = new WebhookSendPool(db, queue, dispatcher, logger, limits);
    for (let i = 0; i < DISPATCH_POLLERS; i++)
      this.pollers.push(
        new PollLoop(
          () => this.dispatchBatch(),
          { intervalMs: DISPATCH_POLL_MS, lingerMs: DISPATCH_LINGER_MS },
          (error) => this.logger.warn({ err: error }, 'webhook dispatch: fetch failed'),
        ),
      );
  }

  async start(): Promise<void> {
    this.unsubscribe = [
      // One idle poller is enough for new events; a busy one fetches again when its batch was full.
      this.queue.onQueued(EVENT_DISPATCH_QUEUE, () => (this.pollers.find((p) => p.idle) ?? this.pollers[0])?.wake()),
      this.queue.onQueued(WEBHOOK_SEND_QUEUE, () => this.pool.wake()),
    ];
    for (const poller of this.pollers) poller.start();
    this.pool.start();
  }

  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await Promise.all(this.pollers.map((p) => p.stop()));
    await this.pool.stop();
  }

  /**
   * Takes a batch of dispatch jobs and dispatches their events in one transaction that also
   * completes the jobs. When that fails (other than for want of the database), each event is tried
   * on its own, so one that cannot be dispatched does not hold up the others (it fails, and its job
   * runs again).
   */
  private async dispatchBatch(): Promise<boolean> {
    const jobs = await this.queue.fetch<DispatchJob>(EVENT_DISPATCH_QUEUE, DISPATCH_BATCH);
    if (jobs.length === 0) return false;
    const dispatch = (batch: typeof jobs) =>
      this.dispatcher.dispatchMany(
        batch.map((j) => j.data.eventId),
        (trx) =>
          this.queue.complete(
            EVENT_DISPATCH_QUEUE,
            batch.map((j) => j.id),
            trx,
          ),
      );
    try {
      await dispatch(jobs);
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        // One by one would not do better (no connection, or none free in the pool): the jobs fail
        // through the queue's own connections and run again after the retry delay (or, with the
        // database gone, expire and run again).
        this.logger.error({ err: error, jobs: jobs.length, queue: EVENT_DISPATCH_QUEUE }, 'job failed');
        await this.queue
          .fail(
            EVENT_DISPATCH_QUEUE,
            jobs.map((j) => j.id),
            error,
          )
          .catch(() => {});
        return false;
      }
      for (const job of jobs) {
        try {
          await dispatch([job]);
        } catch (error) {
          this.logger.error({ err: error, job: job.id, queue: EVENT_DISPATCH_QUEUE }, 'job failed');
          await this.queue.fail(EVENT_DISPATCH_QUEUE, job.id, error).catch(() => {});
        }
      }
    }
    return jobs.length === DISPATCH_BATCH;
  }

  /** Handles every webhook job that is ready now (tests and the CLI); returns how many ran. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const ran =
        (await this.queue.runPending<DispatchJob>(EVENT_DISPATCH_QUEUE, (data) => this.dispatcher.dispatch(data))) +
        (await this.queue.runPending<SendJob>(WEBHOOK_SEND_QUEUE, (data, job) => this.dispatcher.send(data, job.id)));
      if (ran === 0) return total;
      total += ran;
    }
  }
}
