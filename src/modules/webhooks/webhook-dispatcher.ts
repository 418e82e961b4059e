import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics/metrics.js';
import type { Clock } from '../../clock.js';
import { inTransaction, type Db } from '../../db/knex.js';
import { AGENT_URL_EVENT_TYPES, MEMBER_URL_EVENT_TYPES } from '../../events/event-recorder.js';
import type { JobQueue } from '../../jobs/queue.js';
import { WEBHOOK_SEND_QUEUE } from '../../jobs/queue-definitions.js';
import {
  guardedRequest,
  OutgoingRequestError,
  type GuardOptions,
  type OutgoingResponse,
} from '../../outgoing/guarded-request.js';
import type {
  AttemptTrigger,
  EventRow,
  NewAttempt,
  TargetKind,
  WebhookDeliveryRepository,
} from './webhook-delivery.repository.js';
import { serializePayload } from './webhook-payload.js';
import { signingSecrets, type WebhookSecretRepository } from './webhook-secret.repository.js';
import { generateWebhookSecret, signatureHeaders } from './webhook-signature.js';

export type DispatchJob = { eventId: string };
export type SendJob = { deliveryId: string; trigger: AttemptTrigger };

const USER_AGENT = 'VoiceAgentAPI-Webhooks/1.0';

/**
 * The two job handlers behind outgoing webhooks. `dispatch` turns an event into one delivery per
 * target and queues a send for each, in one transaction. `send` makes one signed attempt through the
 * outgoing-request guard and records it, whatever the outcome; nothing here retries an attempt.
 */
export class WebhookDispatcher {
  constructor(
    private readonly db: Db,
    private readonly queue: JobQueue,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly secrets: WebhookSecretRepository,
    private readonly clock: Clock,
    private readonly guard: GuardOptions,
    private readonly logger: Logger,
    private readonly metrics?: Pick<Metrics, 'webhookAttempt'>,
  ) {}

  async dispatch({ eventId }: DispatchJob): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const deliveries = this.deliveries.with(trx);
      const event = await deliveries.lockEvent(eventId);
      if (!event || event.dispatched_at) return;
      const targets = await this.targetsOf(deliveries, event);
      const at = this.clock.now();
      const created = await deliveries.insertDeliveries(event, targets, at);
      for (const deliveryId of created) await this.enqueueSend(trx, { deliveryId, trigger: 'event' });
      await deliveries.markDispatched(event.id, at);
    });
  }

  /** Queues one attempt of a delivery, inside the caller's transaction. */
  async enqueueSend(trx: Knex.Transaction, job: SendJob): Promise<void> {
    await this.queue.send(WEBHOOK_SEND_QUEUE, job, { trx });
  }

  async send(job: SendJob, jobId: string): Promise<void> {
    const delivery = await this.deliveries.findForSend(job.deliveryId);
    if (!delivery || (await this.deliveries.hasAttemptForJob(jobId))) return;
    const attemptedAt = this.clock.now();
    const secret = await this.secrets.getOrCreate(delivery.organization_id, generateWebhookSecret, attemptedAt);
    const body = serializePayload(delivery.event_type, delivery.payload);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders(signingSecrets(secret, attemptedAt), delivery.event_id, attemptedAt, body),
    };
    const outcome = await this.attempt(delivery.target_url, headers, body);
    await inTransaction(this.db, (trx) =>
      this.deliveries.with(trx).recordAttempt(delivery, {
        ...outcome,
        job_id: jobId,
        trigger: job.trigger,
        attempted_at: attemptedAt,
      }),
    );
    this.metrics?.webhookAttempt(delivery.event_type, outcome.status);
    this.logger.info(
      {
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        status: outcome.status,
        http_status: outcome.http_status,
      },
      'webhook attempt recorded',
    );
  }

  /**
   * The agent's URL (for an event of an agent) and the members' URLs, each only when its owner
   * chose the event's type. One URL appearing twice is one delivery.
   */
  private async targetsOf(
    deliveries: WebhookDeliveryRepository,
    event: EventRow,
  ): Promise<{ kind: TargetKind; url: string }[]> {
    const targets: { kind: TargetKind; url: string }[] = [];
    if (event.agent_id && (AGENT_URL_EVENT_TYPES as readonly string[]).includes(event.type)) {
      const url = await deliveries.agentWebhookUrl(event.organization_id, event.agent_id, event.type);
      if (url) targets.push({ kind: 'agent', url });
    }
    if ((MEMBER_URL_EVENT_TYPES as readonly string[]).includes(event.type)) {
      for (const url of await deliveries.memberWebhookUrls(event.organization_id, event.type)) {
        if (!targets.some((t) => t.url === url)) targets.push({ kind: 'member', url });
      }
    }
    return targets;
  }

  /** One POST through the guard; any 2xx is a success, everything else (3xx included) a failure. */
  private async attempt(
    url: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<Omit<NewAttempt, 'job_id' | 'trigger' | 'attempted_at'>> {
    let response: OutgoingResponse;
    try {
      response = await guardedRequest({ url, method: 'POST', headers, body }, this.guard);
    } catch (error) {
      const failure =
        error instanceof OutgoingRequestError ? error : new OutgoingRequestError('network', String(error));
      return { status: 'failed', http_status: null, duration_ms: failure.durationMs, error: failure.message };
    }
    const ok = response.status >= 200 && response.status < 300;
    return {
      status: ok ? 'succeeded' : 'failed',
      http_status: response.status,
      duration_ms: response.durationMs,
      error: ok ? null : httpError(response),
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
