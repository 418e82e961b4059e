import type { JobQueue } from '../../jobs/queue.js';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import type { BackgroundWorker } from '../../jobs/workers.js';
import type { DispatchJob, SendJob, WebhookDispatcher } from './webhook-dispatcher.js';

/** Parallel sends per process, so one hanging receiver (cut at the timeout) does not hold up the rest. */
const SEND_CONCURRENCY = 4;

/** Runs the webhook jobs in the server process; each job is fetched by exactly one instance. */
export class WebhookWorker implements BackgroundWorker {
  readonly name = 'webhooks';

  constructor(
    private readonly queue: JobQueue,
    readonly dispatcher: WebhookDispatcher,
  ) {}

  async start(): Promise<void> {
    await this.queue.work<DispatchJob>(EVENT_DISPATCH_QUEUE, (data) => this.dispatcher.dispatch(data));
    for (let i = 0; i < SEND_CONCURRENCY; i++) {
      await this.queue.work<SendJob>(WEBHOOK_SEND_QUEUE, (data, job) => this.dispatcher.send(data, job.id));
    }
  }

  async stop(): Promise<void> {
    await this.queue.boss.offWork(EVENT_DISPATCH_QUEUE);
    await this.queue.boss.offWork(WEBHOOK_SEND_QUEUE);
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
