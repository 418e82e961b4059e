import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { runStatementPrepared } from '../db/prepared.js';
import { EVENT_DISPATCH_QUEUE } from '../jobs/queue-definitions.js';
import type { JobQueue } from '../jobs/queue.js';
import { namedCtes, oneStatement, placed, type Statement } from '../db/statement.js';
import { StatementBatches } from '../db/statement-batches.js';

/** Changes of phone numbers and experiments; no URL receives them until its owner chooses them. */
export const PHONE_NUMBER_EVENT_TYPES = [
  'phone_number.created',
  'phone_number.updated',
  'phone_number.deleted',
] as const;
export const EXPERIMENT_EVENT_TYPES = [
  'experiment.created',
  'experiment.started',
  'experiment.stopped',
  'experiment.ended',
] as const;
const CONFIGURATION_EVENT_TYPES = [...PHONE_NUMBER_EVENT_TYPES, ...EXPERIMENT_EVENT_TYPES] as const;

/** Events of an agent's data that an agent's URL and a member's URL may both choose. */
const AGENT_DATA_EVENT_TYPES = [
  'agent.updated',
  'kb.document.ready',
  'kb.document.failed',
  'data_subject.erased',
] as const;
const OUTBOUND_EVENT_TYPES = ['outbound_call.completed', 'outbound_call.failed'] as const;

export const EVENT_TYPES = [
  'call.completed',
  'employee.forwarding_created',
  ...AGENT_DATA_EVENT_TYPES,
  ...OUTBOUND_EVENT_TYPES,
  ...CONFIGURATION_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an agent's post_call_webhook_url can receive; `post_call_webhook_events` picks among them. */
export const AGENT_URL_EVENT_TYPES = [
  'call.completed',
  ...AGENT_DATA_EVENT_TYPES,
  ...OUTBOUND_EVENT_TYPES,
  ...CONFIGURATION_EVENT_TYPES,
] as const;
/** Events of the whole organization (no agent): they go to every agent URL of it that chose them. */
export const ORGANIZATION_EVENT_TYPES = ['data_subject.erased', ...PHONE_NUMBER_EVENT_TYPES] as const;
/** What a member's webhook_url (/v1/me) can receive; `webhook_events` picks among them. */
export const MEMBER_URL_EVENT_TYPES = [
  'employee.forwarding_created',
  ...AGENT_DATA_EVENT_TYPES,
  ...CONFIGURATION_EVENT_TYPES,
] as const;

export type NewEvent = {
  organization_id: string;
  agent_id: string | null;
  type: EventType;
  /** The body the receivers get, exactly as it will be sent. */
  payload: Record<string, unknown>;
  /**
   * For `recordWith`: the body as stored, an SQL expression of `$1` (`payload` as jsonb) and values
   * of its own from `$2` on, for fields the statement itself finds (an intake's experiment).
   */
  payloadSql?: Statement;
};

/**
 * Records an event in the transaction of the change that caused it, and enqueues its dispatch in
 * the same transaction: both commit, or neither does.
 */
export class EventRecorder {
  /** recordWith's statements on the pool, coalesced while one is in flight. */
  private readonly batches = new StatementBatches('event_with');

  constructor(private readonly queue: JobQueue) {}

  async record(trx: Knex.Transaction, event: NewEvent): Promise<string> {
    const [row] = await trx('events').insert(event).returning(['id']);
    await this.queue.send(EVENT_DISPATCH_QUEUE, { eventId: row.id }, { trx });
    return row.id as string;
  }

  /**
   * `change` (an INSERT ... RETURNING of the change that caused the event, with `$n` values) run
   * together with the event's row, its dispatch job and `others` (an audit row,
   * `AuditedTransactions.statement`), as one statement (`oneStatement`): one round trip instead of
   * one per row (the call intake, `npm run bench -- calls`). `db` is the pool or a transaction. The
   * event's id is made here instead of by the column's default. Gives the rows `change` returns;
   * when it fails, nothing of it is written. On the pool, statements made while one of the same
   * text is in flight go together as one (StatementBatches), each still with its own rows.
   */
  async recordWith<R>(
    db: Knex | Knex.Transaction,
    change: Statement,
    event: NewEvent,
    others: readonly Statement[] = [],
  ): Promise<R[]> {
    const id = randomUUID();
    const job = await this.queue.sendStatement(EVENT_DISPATCH_QUEUE, { eventId: id });
    const values: unknown[] = [id, event.organization_id, event.agent_id, event.type];
    const payload = placed(
      {
        text: event.payloadSql?.text ?? '$1',
        values: [JSON.stringify(event.payload), ...(event.payloadSql?.values ?? [])],
      },
      values,
    );
    const row: Statement = {
      text: `INSERT INTO events (id, organization_id, agent_id, type, payload) VALUES ($1, $2, $3, $4, ${payload})`,
      values,
    };
    // The same text on every call of a caller: prepared, it is parsed and planned once per connection.
    const rows = db.isTransaction
      ? (await runStatementPrepared(db, 'event_with', oneStatement(change, [row, job, ...others]))).rows
      : await this.batches.run(db as Knex, [change, row, job, ...others]);
    this.queue.queuedIn(EVENT_DISPATCH_QUEUE, db);
    return rows as R[];
  }

  /**
   * `change` with its event, when the change's rows make one, its dispatch job (none without an
   * event) and `others` (statements with their own `$n` values, such as the request's audit row), as
   * one prepared statement of data-modifying CTEs named after `label`: for a change whose event
   * depends on what the database finds (a dialer's result completes its job only while the job is
   * in progress, `npm run bench -- outbound`), one round trip instead of three. `db` is the pool or
   * a transaction; when the statement fails, nothing of it is written. Gives the rows of `select`.
   */
  async recordFrom<R>(
    db: Knex | Knex.Transaction,
    label: string,
    change: ChangeWithEvent,
    others: readonly Statement[] = [],
  ): Promise<R[]> {
    const id = randomUUID();
    const job = await this.queue.sendStatementIf(
      EVENT_DISPATCH_QUEUE,
      { eventId: id },
      'EXISTS (SELECT 1 FROM recorded_event)',
    );
    const values: unknown[] = [...change.values, id];
    const parts = [
      change.ctes,
      `recorded_event AS (INSERT INTO events (id, organization_id, agent_id, type, payload) ` +
        `SELECT $${values.length}::uuid, e.organization_id, e.agent_id, e.type, e.payload FROM (${change.event}) e RETURNING id)`,
      ...namedCtes([job, ...others], values, (i) => (i === 0 ? 'event_job' : `other_${i}`)),
    ];
    const text = `WITH ${parts.join(', ')} ${change.select}`;
    const { rows } = await runStatementPrepared(db, label, { text, values });
    // Told even when no event was made: a listener then fetches and finds nothing.
    this.queue.queuedIn(EVENT_DISPATCH_QUEUE, db);
    return rows as R[];
  }
}

/**
 * A change whose event, if any, the database makes from the change's own rows (for `recordFrom`),
 * with `$n` values from `values`: `ctes`, the change's data-modifying CTEs; `event`, a SELECT over
 * them giving no row (no event) or one (organization_id, agent_id, type, payload: the body as it
 * will be sent); `select`, what the statement answers.
 */
export type ChangeWithEvent = { ctes: string; event: string; select: string; values: readonly unknown[] };
