import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../http/pagination.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type TargetKind = 'agent' | 'member';
export type AttemptTrigger = 'event' | 'redelivery';

export type EventRow = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  type: string;
  payload: Record<string, unknown>;
  dispatched_at: Date | null;
};

export type DeliveryRow = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  event_id: string;
  event_type: string;
  target_kind: TargetKind;
  target_url: string;
  status: DeliveryStatus;
  attempt_count: number;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** Every column of a DeliveryRow; queries select these, never `*`. */
const DELIVERY_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'event_id',
  'event_type',
  'target_kind',
  'target_url',
  'status',
  'attempt_count',
  'last_attempt_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof DeliveryRow)[];

export type AttemptRow = {
  delivery_id: string;
  attempt_number: number;
  trigger: AttemptTrigger;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: Date;
};

export type NewAttempt = Omit<AttemptRow, 'delivery_id' | 'attempt_number'> & { job_id: string };

const ATTEMPT_COLUMNS = [
  'delivery_id',
  'attempt_number',
  'trigger',
  'status',
  'http_status',
  'duration_ms',
  'error',
  'attempted_at',
];

/** A delivery with its attempts, oldest attempt first. */
export type DeliveryWithAttempts = DeliveryRow & { attempts: AttemptRow[] };

/** The outbox side (events, targets) and the delivery log. */
export class WebhookDeliveryRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): WebhookDeliveryRepository {
    return new WebhookDeliveryRepository(trx);
  }

  /** The event, locked for this transaction so two dispatchers of one event take turns. */
  async lockEvent(eventId: string): Promise<EventRow | undefined> {
    return this.db('events')
      .where({ id: eventId })
      .forUpdate()
      .first('id', 'organization_id', 'agent_id', 'type', 'payload', 'dispatched_at');
  }

  async markDispatched(eventId: string, at: Date): Promise<void> {
    await this.db('events').where({ id: eventId }).update({ dispatched_at: at });
  }

  /** The agent's URL, when it chose to receive `eventType`. */
  async agentWebhookUrl(organizationId: string, agentId: string, eventType: string): Promise<string | null> {
    const row = await this.db('agents')
      .where({ id: agentId, organization_id: organizationId })
      .whereRaw('? = ANY(post_call_webhook_events)', [eventType])
      .first('post_call_webhook_url');
    return (row?.post_call_webhook_url as string | null | undefined) ?? null;
  }

  /** Distinct webhook URLs of the organization's members who chose `eventType`, in a stable order. */
  async memberWebhookUrls(organizationId: string, eventType: string): Promise<string[]> {
    const rows: { webhook_url: string }[] = await this.db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.organization_id', organizationId)
      .whereNotNull('u.webhook_url')
      .whereRaw('? = ANY(u.webhook_events)', [eventType])
      .distinct('u.webhook_url')
      .orderBy('u.webhook_url');
    return rows.map((r) => r.webhook_url);
  }

  /** Inserts the deliveries that do not exist yet; returns the ids of the new ones. */
  async insertDeliveries(event: EventRow, targets: { kind: TargetKind; url: string }[], at: Date): Promise<string[]> {
    if (targets.length === 0) return [];
    const rows = targets.map((t) => ({
      organization_id: event.organization_id,
      agent_id: event.agent_id,
      event_id: event.id,
      event_type: event.type,
      target_kind: t.kind,
      target_url: t.url,
      created_at: at,
      updated_at: at,
    }));
    const inserted: { id: string }[] = await this.db('webhook_deliveries')
      .insert(rows)
      .onConflict(['event_id', 'target_url'])
      .ignore()
      .returning('id');
    return inserted.map((r) => r.id);
  }

  /** What a send needs: the delivery and its event's payload. */
  async findForSend(deliveryId: string): Promise<(DeliveryRow & { payload: Record<string, unknown> }) | undefined> {
    return this.db('webhook_deliveries as d')
      .join('events as e', 'e.id', 'd.event_id')
      .where('d.id', deliveryId)
      .first(...DELIVERY_COLUMNS.map((column) => `d.${column}`), 'e.payload');
  }

  /** The receiver of each delivery (organization and URL origin): what per-target limits count. */
  async targetsOf(deliveryIds: string[]): Promise<Map<string, string>> {
    const rows: { id: string; organization_id: string; target_url: string }[] = await this.db('webhook_deliveries')
      .whereIn('id', deliveryIds)
      .select('id', 'organization_id', 'target_url');
    return new Map(rows.map((r) => [r.id, `${r.organization_id} ${originOf(r.target_url)}`]));
  }

  async hasAttemptForJob(jobId: string): Promise<boolean> {
    return (await this.db('webhook_delivery_attempts').where({ job_id: jobId }).first('id')) !== undefined;
  }

  /**
   * Records one attempt and its outcome on the delivery. The delivery row is locked, so numbering is
   * gapless; an attempt already recorded for this job (a re-run after a crash) is not recorded again.
   */
  async recordAttempt(delivery: DeliveryRow, attempt: NewAttempt): Promise<void> {
    const locked = await this.db('webhook_deliveries')
      .where({ id: delivery.id, organization_id: delivery.organization_id })
      .forUpdate()
      .first('attempt_count');
    if (!locked || (await this.db('webhook_delivery_attempts').where({ job_id: attempt.job_id }).first('id'))) return;
    const attemptNumber = (locked.attempt_count as number) + 1;
    await this.db('webhook_delivery_attempts').insert({
      ...attempt,
      delivery_id: delivery.id,
      organization_id: delivery.organization_id,
      attempt_number: attemptNumber,
    });
    await this.db('webhook_deliveries').where({ id: delivery.id, organization_id: delivery.organization_id }).update({
      attempt_count: attemptNumber,
      status: attempt.status,
      last_attempt_at: attempt.attempted_at,
      updated_at: attempt.attempted_at,
    });
  }

  /** The agent's deliveries, newest first, each with its attempts. */
  async list(
    organizationId: string,
    agentId: string,
    filter: { status?: DeliveryStatus },
    page: PageParams,
  ): Promise<Page<DeliveryWithAttempts>> {
    const query = this.db('webhook_deliveries').where({ organization_id: organizationId, agent_id: agentId });
    if (filter.status) query.where({ status: filter.status });
    const result = await paginate<DeliveryRow>(query.select(DELIVERY_COLUMNS), page, [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
    const attempts = await this.attemptsOf(
      organizationId,
      result.data.map((d) => d.id),
    );
    return { ...result, data: result.data.map((d) => ({ ...d, attempts: attempts.get(d.id) ?? [] })) };
  }

  async find(organizationId: string, agentId: string, deliveryId: string): Promise<DeliveryWithAttempts | undefined> {
    const row: DeliveryRow | undefined = await this.db('webhook_deliveries')
      .where({ id: deliveryId, organization_id: organizationId, agent_id: agentId })
      .first(DELIVERY_COLUMNS);
    if (!row) return undefined;
    return { ...row, attempts: (await this.attemptsOf(organizationId, [row.id])).get(row.id) ?? [] };
  }

  /** A redelivery was asked for: the delivery is pending again until its attempt is recorded. */
  async markPending(organizationId: string, deliveryId: string, at: Date): Promise<void> {
    await this.db('webhook_deliveries')
      .where({ id: deliveryId, organization_id: organizationId })
      .update({ status: 'pending', updated_at: at });
  }

  private async attemptsOf(organizationId: string, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const byDelivery = new Map<string, AttemptRow[]>();
    if (deliveryIds.length === 0) return byDelivery;
    const rows: AttemptRow[] = await this.db('webhook_delivery_attempts')
      .where({ organization_id: organizationId })
      .whereIn('delivery_id', deliveryIds)
      .orderBy([{ column: 'delivery_id' }, { column: 'attempt_number' }])
      .select(ATTEMPT_COLUMNS);
    for (const row of rows) byDelivery.set(row.delivery_id, [...(byDelivery.get(row.delivery_id) ?? []), row]);
    return byDelivery;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
