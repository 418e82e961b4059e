import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics/metrics.js';
import type { Clock } from '../../clock.js';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS } from '../../config.js';
import { inTransaction, type Db } from '../../db/knex.js';
import {
  AGENT_URL_EVENT_TYPES,
  MEMBER_URL_EVENT_TYPES,
  ORGANIZATION_EVENT_TYPES,
} from '../../events/event-recorder.js';
import type { JobQueue } from '../../jobs/queue.js';
import { WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import {
  guardedRequest,
  OutgoingRequestError,
  type GuardOptions,
  type OutgoingFailure,
  type OutgoingResponse,
} from '../../outgoing/guarded-request.js';
import type {
  AttemptTrigger,
  DeliveryForSend,
  EventRow,
  EventToDispatch,
  NewAttempt,
  TargetKind,
  WebhookDeliveryRepository,
  WebhookTarget,
} from './webhook-delivery.repository.js';
import { serializePayload } from './webhook-payload.js';
import { signingSecrets, type WebhookSecretRepository, type WebhookSecretRow } from './webhook-secret.repository.js';
import { generateWebhookSecret, signatureHeaders } from './webhook-signature.js';

export type DispatchJob = { eventId: string };
/** One attempt of a delivery; `retry` (1-based) for an automatic retry. */
export type SendJob = { deliveryId: string; trigger: AttemptTrigger; retry?: number };

/** What a test ping answers (never stored). */
export type PingResult = {
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  webhook_id: string;
  target_url: string;
};

/** The `/metrics` label of a test ping's outcome. */
export type PingOutcome = 'succeeded' | 'http_error' | OutgoingFailure;

type PostOutcome = Omit<NewAttempt, 'job_id' | 'trigger' | 'attempted_at' | 'retry'> & { failure?: OutgoingFailure };

/** A send job with what its attempt needs, read for a whole batch of jobs at once. */
export type PreparedSend = {
  jobId: string;
  job: SendJob;
  delivery: DeliveryForSend;
  /** The organization's secret as read with the batch; absent means read it when the attempt starts. */
  secret?: WebhookSecretRow;
};

/** An attempt made, to be recorded. */
export type AttemptResult = { send: PreparedSend; attempt: NewAttempt };

const USER_AGENT = 'VoiceAgentAPI-Webhooks/1.0';

/** What WebhookDispatcher is built from, passed by name by its module file. */
export type WebhookDispatcherDeps = {
  db: Db;
  queue: JobQueue;
  deliveries: WebhookDeliveryRepository;
  secrets: WebhookSecretRepository;
  clock: Clock;
  guard: GuardOptions;
  logger: Logger;
  metrics?: Pick<Metrics, 'webhookAttempt' | 'webhookTestPing'>;
  /** WEBHOOK_RETRY_SCHEDULE_SECONDS: the delay before each automatic retry. */
  retrySchedule?: readonly number[];
};

/**
 * The steps behind outgoing webhooks. `dispatchMany` turns events into one delivery per target and
 * queues a send for each, in one transaction for the batch. A send is `prepare` (one read for a batch
 * of jobs), `attempt` (one signed request through the outgoing-request guard) and `record` (the
 * outcome, whatever it is, for a batch of attempts in one transaction). An attempt is never repeated
 * by itself: only a delivery whose target turned retries on gets a new job for its next retry,
 * queued (after `retrySchedule[n]` seconds) in the transaction that records the failed attempt.
 * `ping` is a test ping: one signed request, answered and counted, never stored.
 */
export class WebhookDispatcher {
  private readonly db: Db;
  private readonly queue: JobQueue;
  private readonly deliveries: WebhookDeliveryRepository;
  private readonly secrets: WebhookSecretRepository;
  private readonly clock: Clock;
  private readonly guard: GuardOptions;
  private readonly logger: Logger;
  private readonly metrics?: Pick<Metrics, 'webhookAttempt' | 'webhookTestPing'>;
  private readonly retrySchedule: readonly number[];

  constructor(deps: WebhookDispatcherDeps) {
    this.db = deps.db;
    this.queue = deps.queue;
    this.deliveries = deps.deliveries;
    this.secrets = deps.secrets;
    this.clock = deps.clock;
    this.guard = deps.guard;
    this.logger = deps.logger;
    this.metrics = deps.metrics;
    this.retrySchedule = deps.retrySchedule ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_SECONDS;
  }

  async dispatch({ eventId }: DispatchJob): Promise<void> {
    await this.dispatchMany([eventId]);
  }

  /**
   * Dispatches a batch of events in one transaction: events already dispatched are skipped, the new
   * deliveries and their send jobs are written together, and the events are marked dispatched.
   * `alsoInTransaction` runs last inside it (the caller completes the dispatch jobs there).
   */
  async dispatchMany(eventIds: string[], alsoInTransaction?: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const deliveries = this.deliveries.with(trx);
      const events = await deliveries.lockUndispatchedEvents(eventIds);
      const memberUrls = new Map<string, Promise<WebhookTarget[]>>();
      const targets: { event: EventRow; kind: TargetKind; url: string; retries: boolean }[] = [];
      for (const event of events) {
        for (const target of await this.targetsOf(deliveries, event, memberUrls)) targets.push({ event, ...target });
      }
      const at = this.clock.now();
      const created = await deliveries.insertDeliveries(targets, at);
      await this.queue.sendMany(
        WEBHOOK_SEND_QUEUE,
        created.map((deliveryId): SendJob => ({ deliveryId, trigger: 'event' })),
        { trx },
      );
      await deliveries.markDispatched(
        events.map((e) => e.id),
        at,
      );
      await alsoInTransaction?.(trx);
    });
  }

  /** Queues one attempt of a delivery, inside the caller's transaction. */
  async enqueueSend(trx: Knex.Transaction, job: SendJob): Promise<void> {
    await this.queue.send(WEBHOOK_SEND_QUEUE, job, { trx });
  }

  /** One send job from start to end (tests and the CLI drain the queue with it). */
  async send(job: SendJob, jobId: string): Promise<void> {
    const [send] = await this.prepare([{ id: jobId, data: job }]);
    if (!send) return;
    await this.record([await this.attempt(send)]);
  }

  /**
   * What a batch of send jobs needs, in two reads: deliveries with payloads, and the organizations'
   * secrets. Jobs whose delivery is gone or whose attempt was recorded already are left out.
   */
  async prepare(jobs: { id: string; data: SendJob }[]): Promise<PreparedSend[]> {
    const found = await this.deliveries.findForSends(
      jobs.map((j) => ({ jobId: j.id, deliveryId: j.data.deliveryId, retry: j.data.retry })),
    );
    const secrets = await this.secrets.getOrCreateMany(
      [...found.values()].map((d) => d.organization_id),
      generateWebhookSecret,
      this.clock.now(),
    );
    return jobs.flatMap((j) => {
      const delivery = found.get(j.id);
      return delivery ? [{ jobId: j.id, job: j.data, delivery, secret: secrets.get(delivery.organization_id) }] : [];
    });
  }

  /** One signed POST of a prepared send; the outcome, whatever it is, comes back to be recorded. */
  async attempt(send: PreparedSend): Promise<AttemptResult> {
    const { delivery } = send;
    const attemptedAt = this.clock.now();
    const secret =
      send.secret ?? (await this.secrets.getOrCreate(delivery.organization_id, generateWebhookSecret, attemptedAt));
    const outcome = await this.signedPost(
      secret,
      delivery.target_url,
      delivery.event_id,
      serializePayload(delivery.event_type, delivery.payload),
      attemptedAt,
    );
    return {
      send,
      attempt: {
        status: outcome.status,
        http_status: outcome.http_status,
        duration_ms: outcome.duration_ms,
        error: outcome.error,
        retryable: outcome.retryable,
        job_id: send.jobId,
        trigger: send.job.trigger,
        ...(send.job.retry === undefined ? {} : { retry: send.job.retry }),
        attempted_at: attemptedAt,
      },
    };
  }

  /**
   * A test ping: a signed `webhook.test` event to `url`, through the same guard and signer as a
   * delivery, with a `webhook-id` of its own. Answered within the webhook timeout, counted in
   * /metrics, never stored and never retried.
   */
  async ping(target: { organizationId: string; agentId: string | null; url: string }): Promise<PingResult> {
    const at = this.clock.now();
    const webhookId = randomUUID();
    const secret = await this.secrets.getOrCreate(target.organizationId, generateWebhookSecret, at);
    const body = serializePayload('webhook.test', {
      test: true,
      note: 'A test ping asked for through the API: no call or change caused it, and it is not stored or retried',
      organization_id: target.organizationId,
      agent_id: target.agentId,
      sent_at: at.toISOString(),
    });
    const outcome = await this.signedPost(secret, target.url, webhookId, body, at);
    const label: PingOutcome = outcome.failure ?? (outcome.status === 'succeeded' ? 'succeeded' : 'http_error');
    this.metrics?.webhookTestPing(label);
    this.logger.info(
      {
        webhook_id: webhookId,
        organization_id: target.organizationId,
        agent_id: target.agentId,
        outcome: label,
        http_status: outcome.http_status,
      },
      'webhook test ping sent',
    );
    return {
      delivered: outcome.status === 'succeeded',
      status_code: outcome.http_status,
      duration_ms: outcome.duration_ms,
      error: outcome.error,
      webhook_id: webhookId,
      target_url: target.url,
    };
  }

  /** One signed POST of `body` as message `id`, signed at `at` with the secrets that sign then. */
  private signedPost(secret: WebhookSecretRow, url: string, id: string, body: string, at: Date): Promise<PostOutcome> {
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders(signingSecrets(secret, at), id, at, body),
    };
    return this.post(url, headers, body);
  }

  /**
   * Records attempts in one transaction; `alsoInTransaction` runs inside it (the send pool completes
   * the attempts' jobs there, so an attempt is recorded and its job completed together).
   */
  async record(results: AttemptResult[], alsoInTransaction?: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const retries = await this.deliveries.with(trx).recordAttempts(
        results.map(({ send, attempt }) => ({ delivery: send.delivery, attempt })),
        { schedule: this.retrySchedule, at: this.clock.now() },
      );
      for (const { deliveryId, retry, delaySeconds } of retries)
        await this.queue.send(WEBHOOK_SEND_QUEUE, { deliveryId, trigger: 'retry', retry } satisfies SendJob, {
          trx,
          startAfter: delaySeconds,
        });
      await alsoInTransaction?.(trx);
    });
    for (const { send, attempt } of results) {
      this.metrics?.webhookAttempt(send.delivery.event_type, attempt.status);
      this.logger.info(
        {
          delivery_id: send.delivery.id,
          event_id: send.delivery.event_id,
          status: attempt.status,
          http_status: attempt.http_status,
        },
        'webhook attempt recorded',
      );
    }
  }

  /**
   * The agent's URL (for an event of an agent) and the members' URLs, each only when its owner
   * chose the event's type. One URL appearing twice is one delivery. Member URLs are read once per
   * organization and type in a batch.
   */
  private async targetsOf(
    deliveries: WebhookDeliveryRepository,
    event: EventToDispatch,
    memberUrls: Map<string, Promise<WebhookTarget[]>>,
  ): Promise<{ kind: TargetKind; url: string; retries: boolean }[]> {
    const targets: { kind: TargetKind; url: string; retries: boolean }[] = [];
    // One URL named twice is one delivery; it retries when one of its owners asked for retries.
    const add = (kind: TargetKind, { url, retries }: WebhookTarget) => {
      const existing = targets.find((t) => t.url === url);
      if (existing) existing.retries ||= retries;
      else targets.push({ kind, url, retries });
    };
    if (event.agent_id && event.agent_webhook_url && (AGENT_URL_EVENT_TYPES as readonly string[]).includes(event.type))
      add('agent', { url: event.agent_webhook_url, retries: event.agent_webhook_retries === true });
    if (!event.agent_id && (ORGANIZATION_EVENT_TYPES as readonly string[]).includes(event.type)) {
      for (const target of await deliveries.agentWebhookUrls(event.organization_id, event.type)) add('agent', target);
    }
    if ((MEMBER_URL_EVENT_TYPES as readonly string[]).includes(event.type)) {
      const key = `${event.organization_id} ${event.type}`;
      if (!memberUrls.has(key)) memberUrls.set(key, deliveries.memberWebhookUrls(event.organization_id, event.type));
      for (const target of await memberUrls.get(key)!) add('member', target);
    }
    return targets;
  }

  /**
   * One POST through the guard; any 2xx is a success, everything else (3xx included) a failure. A
   * refusal by the guard is not worth retrying (the address is forbidden); any other failure is.
   */
  private async post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> {
    let response: OutgoingResponse;
    try {
      response = await guardedRequest({ url, method: 'POST', headers, body }, this.guard);
    } catch (error) {
      const failure =
        error instanceof OutgoingRequestError ? error : new OutgoingRequestError('network', String(error));
      return {
        status: 'failed',
        http_status: null,
        duration_ms: failure.durationMs,
        error: failure.message,
        retryable: failure.reason !== 'refused',
        failure: failure.reason,
      };
    }
    const ok = response.status >= 200 && response.status < 300;
    return {
      status: ok ? 'succeeded' : 'failed',
      http_status: response.status,
      duration_ms: response.durationMs,
      error: ok ? null : httpError(response),
      retryable: !ok,
    };
  }
}

function httpError(response: OutgoingResponse): string {
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.location;
    return `Redirect not followed (HTTP ${response.status}${location ? ` to ${String(location).slice(0, 500)}` : ''})`;
  }
  return `HTTP ${response.status}`;
}
