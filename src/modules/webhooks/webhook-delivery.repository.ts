import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type TargetKind = 'agent' | 'member';
/** `event`: the first attempt; `retry`: an automatic retry (opt-in); `redelivery`: asked for through the API. */
export type AttemptTrigger = 'event' | 'redelivery' | 'retry';

export type EventRow = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  type: string;
  payload: Record<string, unknown>;
  dispatched_at: Date | null;
};

/** An event to dispatch, with its agent's webhook URL (and retry setting) when the agent chose the event's type. */
export type EventToDispatch = EventRow & { agent_webhook_url: string | null; agent_webhook_retries: boolean | null };

/** A URL an event goes to, and whether its owner turned automatic retries on. */
export type WebhookTarget = { url: string; retries: boolean };

/** A retry to queue after an attempt was recorded: retry `retry` (1-based) of the delivery, after `delaySeconds`. */
export type ScheduledRetry = { deliveryId: string; retry: number; delaySeconds: number };

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
  /** Whether failed automatic attempts are retried (the target's setting when the event was dispatched). */
  retries: boolean;
  /** The automatic retry the delivery waits for (1..schedule length), null when none is due. */
  next_retry: number | null;
  next_retry_at: Date | null;
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
  'retries',
  'next_retry',
  'next_retry_at',
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

export type NewAttempt = Omit<AttemptRow, 'delivery_id' | 'attempt_number'> & {
  job_id: string;
  /** For a `retry` attempt: which automatic retry it is (1-based). Not stored. */
  retry?: number;
  /** false when a failure is not worth retrying (the guard refused the address). Not stored. */
  retryable: boolean;
};

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

/** What a send needs: the delivery and its event's payload. */
export type DeliveryForSend = DeliveryRow & { payload: Record<string, unknown> };

/** A delivery with its attempts, oldest attempt first. */
export type DeliveryWithAttempts = DeliveryRow & { attempts: AttemptRow[] };

/** The outbox side (events, targets) and the delivery log. */
export class WebhookDeliveryRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Db | Knex.Transaction): WebhookDeliveryRepository {
    return new WebhookDeliveryRepository(trx);
  }

  /**
   * The events of `eventIds` not dispatched yet, locked for this transaction (in id order, so two
   * dispatchers of overlapping batches take turns instead of deadlocking), each with its agent's
   * webhook URL when the agent chose to receive the event's type.
   */
  async lockUndispatchedEvents(eventIds: string[]): Promise<EventToDispatch[]> {
    if (eventIds.length === 0) return [];
    return this.db('events as e')
      .leftJoin('agents as a', (join) =>
        join
          .on('a.id', 'e.agent_id')
          .andOn('a.organization_id', 'e.organization_id')
          .andOn(this.db.raw('e.type = ANY(a.post_call_webhook_events)')),
      )
      .whereIn('e.id', eventIds)
      .whereNull('e.dispatched_at')
      .orderBy('e.id')
      .forUpdate('e')
      .select(
        'e.id',
        'e.organization_id',
        'e.agent_id',
        'e.type',
        'e.payload',
        'e.dispatched_at',
        'a.post_call_webhook_url as agent_webhook_url',
        'a.post_call_webhook_retries as agent_webhook_retries',
      );
  }

  async markDispatched(eventIds: string[], at: Date): Promise<void> {
    if (eventIds.length === 0) return;
    await this.db('events').whereIn('id', eventIds).update({ dispatched_at: at });
  }

  /**
   * Distinct webhook URLs of the organization's members who chose `eventType`, in a stable order; a
   * URL retries when one of the members who set it turned `webhook_retries` on.
   */
  async memberWebhookUrls(organizationId: string, eventType: string): Promise<WebhookTarget[]> {
    const members = this.db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.organization_id', organizationId);
    return this.subscribedUrls(members, 'u.webhook_', eventType);
  }

  /**
   * Distinct post_call_webhook_url of the organization's agents that chose `eventType`, in a stable
   * order; a URL retries when one of the agents that set it turned `post_call_webhook_retries` on.
   */
  async agentWebhookUrls(organizationId: string, eventType: string): Promise<WebhookTarget[]> {
    return this.subscribedUrls(
      this.db('agents').where({ organization_id: organizationId }),
      'post_call_webhook_',
      eventType,
    );
  }

  /** The distinct `{columns}url` of the rows whose `{columns}events` hold `eventType`, with `{columns}retries`. */
  private async subscribedUrls(rows: Knex.QueryBuilder, columns: string, eventType: string): Promise<WebhookTarget[]> {
    const targets: WebhookTarget[] = await rows
      .whereNotNull(`${columns}url`)
      .whereRaw(`? = ANY(${columns}events)`, [eventType])
      .groupBy(`${columns}url`)
      .orderBy(`${columns}url`)
      .select(`${columns}url as url`, this.db.raw(`bool_or(${columns}retries) AS retries`));
    return targets;
  }

  /** The signed-in user's own webhook URL (/v1/me), for a test ping. */
  async userWebhookUrl(userId: string): Promise<string | null> {
    const row: { webhook_url: string | null } | undefined = await this.db('users')
      .where({ id: userId })
      .first('webhook_url');
    return row?.webhook_url ?? null;
  }

  /** Inserts the deliveries that do not exist yet (one statement for all); returns the ids of the new ones. */
  async insertDeliveries(
    targets: { event: EventRow; kind: TargetKind; url: string; retries: boolean }[],
    at: Date,
  ): Promise<string[]> {
    if (targets.length === 0) return [];
    const rows = targets.map(({ event, kind, url, retries }) => ({
      organization_id: event.organization_id,
      agent_id: event.agent_id,
      event_id: event.id,
      event_type: event.type,
      target_kind: kind,
      target_url: url,
      retries,
      created_at: at,
      updated_at: at,
    }));
    const inserted: { id: string }[] = await this.db('webhook_deliveries')
      .insert(rows)
      // The unique key includes the partition key (created_at, the same `at` for the whole batch);
      // a re-run is kept out by the event's dispatched_at, set in this transaction.
      .onConflict(['event_id', 'target_url', 'created_at'])
      .ignore()
      .returning('id');
    return inserted.map((r) => r.id);
  }

  /**
   * What the sends of a batch of jobs need, in one query: each job's delivery with its event's
   * payload. A job whose delivery is gone, whose attempt is recorded already (a re-run after its
   * worker died), or that is an automatic retry the delivery no longer waits for (it succeeded, or
   * the retry was recorded), is absent from the answer.
   */
  async findForSends(
    jobs: { jobId: string; deliveryId: string; retry?: number }[],
  ): Promise<Map<string, DeliveryForSend>> {
    if (jobs.length === 0) return new Map();
    const { rows }: { rows: (DeliveryForSend & { job_id: string })[] } = await this.db.raw(
      `SELECT j.job_id, ${DELIVERY_COLUMNS.map((column) => `d.${column}`).join(', ')}, e.payload
         FROM unnest(?::uuid[], ?::uuid[], ?::int[]) AS j(job_id, delivery_id, retry)
         JOIN webhook_deliveries d ON d.id = j.delivery_id
         JOIN events e ON e.id = d.event_id
        WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery_attempts a WHERE a.job_id = j.job_id)
          AND (j.retry = 0 OR d.next_retry = j.retry)`,
      // 0: not an automatic retry (retries are numbered from 1).
      [jobs.map((j) => j.jobId), jobs.map((j) => j.deliveryId), jobs.map((j) => j.retry ?? 0)],
    );
    return new Map(rows.map(({ job_id, ...delivery }) => [job_id, delivery]));
  }

  /**
   * Records attempts and their outcomes on their deliveries, all in the caller's transaction: the
   * deliveries are locked (in id order), so numbering is gapless; an attempt already recorded for its
   * job (a re-run after a crash) is not recorded again. Several attempts of one delivery are numbered
   * in the order they were made.
   *
   * Retries are decided here, under the lock: a failed automatic attempt (the first one, or the
   * retry the delivery waits for) of a delivery that retries schedules the next retry after
   * `schedule[n]` seconds, until the schedule is used up (then the delivery is `failed`). A success,
   * whatever its trigger, ends the retries. A failed redelivery leaves a scheduled retry in place.
   * Returns the retries to queue (in the same transaction).
   */
  async recordAttempts(
    attempts: { delivery: DeliveryRow; attempt: NewAttempt }[],
    retry: { schedule: readonly number[]; at: Date },
  ): Promise<ScheduledRetry[]> {
    if (attempts.length === 0) return [];
    const locked: {
      id: string;
      attempt_count: number;
      retries: boolean;
      next_retry: number | null;
      next_retry_at: Date | null;
    }[] = await this.db('webhook_deliveries')
      .whereIn(
        ['id', 'organization_id'],
        attempts.map(({ delivery }) => [delivery.id, delivery.organization_id]),
      )
      .orderBy('id')
      .forUpdate()
      .select('id', 'attempt_count', 'retries', 'next_retry', 'next_retry_at');
    const recorded: { job_id: string }[] = await this.db('webhook_delivery_attempts')
      .whereIn(
        'job_id',
        attempts.map(({ attempt }) => attempt.job_id),
      )
      .select('job_id');
    const states = new Map(locked.map((r) => [r.id, { ...r }]));
    const skip = new Set(recorded.map((r) => r.job_id));
    const rows: (Omit<AttemptRow, 'attempt_number'> & {
      job_id: string;
      organization_id: string;
      attempt_number: number;
    })[] = [];
    const latest = new Map<string, { organization_id: string; status: DeliveryStatus; attempted_at: Date }>();
    const scheduled = new Map<string, ScheduledRetry>();
    const inOrder = [...attempts].sort((x, y) => x.attempt.attempted_at.getTime() - y.attempt.attempted_at.getTime());
    for (const { delivery, attempt } of inOrder) {
      const state = states.get(delivery.id);
      if (state === undefined || skip.has(attempt.job_id)) continue;
      skip.add(attempt.job_id);
      state.attempt_count += 1;
      rows.push({
        job_id: attempt.job_id,
        trigger: attempt.trigger,
        status: attempt.status,
        http_status: attempt.http_status,
        duration_ms: attempt.duration_ms,
        error: attempt.error,
        attempted_at: attempt.attempted_at,
        delivery_id: delivery.id,
        organization_id: delivery.organization_id,
        attempt_number: state.attempt_count,
      });
      const next = afterAttempt(state, attempt, retry.schedule);
      if (next.next_retry !== state.next_retry) {
        state.next_retry = next.next_retry;
        state.next_retry_at =
          next.delaySeconds === undefined ? null : new Date(retry.at.getTime() + next.delaySeconds * 1000);
        if (next.delaySeconds === undefined) scheduled.delete(delivery.id);
        else
          scheduled.set(delivery.id, {
            deliveryId: delivery.id,
            retry: next.next_retry!,
            delaySeconds: next.delaySeconds,
          });
      }
      latest.set(delivery.id, {
        organization_id: delivery.organization_id,
        status: next.status,
        attempted_at: attempt.attempted_at,
      });
    }
    if (rows.length === 0) return [];
    await this.db('webhook_delivery_attempts').insert(rows);
    const updates = [...latest].map(([id, { organization_id, status, attempted_at }]) => {
      const state = states.get(id)!;
      return {
        id,
        organization_id,
        attempt_count: state.attempt_count,
        status,
        attempted_at,
        next_retry: state.next_retry,
        next_retry_at: state.next_retry_at,
      };
    });
    await this.db.raw(
      `UPDATE webhook_deliveries AS d
          SET attempt_count = v.attempt_count, status = v.status,
              last_attempt_at = v.attempted_at, updated_at = v.attempted_at,
              next_retry = v.next_retry, next_retry_at = v.next_retry_at
         FROM jsonb_to_recordset(?::jsonb)
           AS v(id uuid, organization_id uuid, attempt_count int, status text, attempted_at timestamptz,
                next_retry smallint, next_retry_at timestamptz)
        WHERE d.id = v.id AND d.organization_id = v.organization_id`,
      [JSON.stringify(updates)],
    );
    return [...scheduled.values()];
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

/**
 * A delivery's status and next retry after one more attempt. `automatic` is the attempt's place in
 * the schedule (0: the first attempt, n: retry n), or undefined for a redelivery or for a retry the
 * delivery no longer waits for.
 */
function afterAttempt(
  state: { retries: boolean; next_retry: number | null },
  attempt: NewAttempt,
  schedule: readonly number[],
): { status: DeliveryStatus; next_retry: number | null; delaySeconds?: number } {
  const automatic =
    attempt.trigger === 'event'
      ? 0
      : attempt.trigger === 'retry' && attempt.retry === state.next_retry
        ? attempt.retry
        : undefined;
  if (attempt.status === 'succeeded') return { status: 'succeeded', next_retry: null };
  if (automatic === undefined)
    return { status: state.next_retry === null ? 'failed' : 'pending', next_retry: state.next_retry };
  if (state.retries && attempt.retryable && automatic < schedule.length)
    return { status: 'pending', next_retry: automatic + 1, delaySeconds: schedule[automatic]! };
  return { status: 'failed', next_retry: null };
}
