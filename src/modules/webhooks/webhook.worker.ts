import type { Logger } from 'pino';
import type { Db } from '../../db/knex.js';
import type { JobQueue } from '../../jobs/queue.js';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import type { BackgroundWorker } from '../../jobs/workers.js';
import type { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import type { DispatchJob, SendJob, WebhookDispatcher } from './webhook-dispatcher.js';
import { DEFAULT_SEND_LIMITS, WebhookSendPool, type SendPoolLimits } from './webhook-send-pool.js';

/** Dispatch is database work only (one short transaction per event): batches handled side by side, three pollers (a poller fetches again at once when its batch took longer than the interval). */
const DISPATCH_WORKERS = 3;
const DISPATCH_BATCH = 25;
const DISPATCH_POLL_SECONDS = 0.5;

/** Runs the webhook jobs in the server process; each job is fetched by exactly one instance. */
export class WebhookWorker implements BackgroundWorker {
  readonly name = 'webhooks';
  readonly pool: WebhookSendPool;

  constructor(
    db: Db,
    private readonly queue: JobQueue,
    readonly dispatcher: WebhookDispatcher,
    deliveries: WebhookDeliveryRepository,
    logger: Logger,
    limits: SendPoolLimits = DEFAULT_SEND_LIMITS,
  ) {
    this.pool = new WebhookSendPool(
      db,
      queue,
      (ids) => deliveries.targetsOf(ids),
      (data, jobId) => dispatcher.send(data, jobId),
      logger,
      limits,
    );
  }

  async start(): Promise<void> {
    for (let i = 0; i < DISPATCH_WORKERS; i++) {
      await this.queue.workBatch<DispatchJob>(EVENT_DISPATCH_QUEUE, (data) => this.dispatcher.dispatch(data), {
        batchSize: DISPATCH_BATCH,
        pollingIntervalSeconds: DISPATCH_POLL_SECONDS,
      });
    }
    this.pool.start();
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(EVENT_DISPATCH_QUEUE);
    await this.pool.stop();
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
