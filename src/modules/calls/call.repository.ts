import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import type { Statement } from '../../db/statement.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { statementsOn, type Statements } from '../../db/replicas.js';
import { timeId, whereId } from '../../db/time-ids.js';
import { runPreparedQuery } from '../../db/prepared.js';
import {
  cursorPagination,
  MAX_LIMIT,
  type CursorPage,
  type CursorParams,
  type PageParams,
} from '../../api/pagination.js';
import {
  containsPattern,
  countPlan,
  DEFAULT_RETENTION_DAYS,
  dayPlan,
  hourPlan,
  callerNumberOf,
  skipPlan,
  timeRange,
  type TimeRange,
} from './call.rules.js';
import type { ListCallsFilters } from './call.schemas.js';
import type { ExtractedData } from './extracted-data.js';
import { countedOutcomeFilter, type ExtractedFilter } from './extracted-filters.js';

export type TranscriptEntry = { role: string; text: string };

export type CallDirection = 'inbound' | 'outbound';

export type CallRow = {
  id: string;
  organization_id: string;
  agent_id: string;
  call_id: string;
  customer_name: string | null;
  customer_request: string | null;
  phone_number: string | null;
  duration: number;
  done: boolean;
  general_success: boolean | null;
  disconnection_reason: string | null;
  call_summary: string | null;
  transcript: TranscriptEntry[] | null;
  audio_file_url: string | null;
  final_score: number | null;
  employee_id: string | null;
  /** The linked employee's name (joined on read). */
  employee_name?: string | null;
  note: string | null;
  extracted_data: ExtractedData;
  direction: CallDirection;
  /** The outbound call job this call answers (direction outbound). */
  outbound_call_id: string | null;
  /** The experiment and variant the routing answer assigned to this call_id. */
  experiment_id: string | null;
  variant: string | null;
  is_purged: boolean;
  purged_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type NewCall = Omit<CallRow, 'id' | 'employee_name' | 'is_purged' | 'purged_at'>;

/** The stored columns of a CallRow; queries select these, never `*`. */
const CALL_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'call_id',
  'customer_name',
  'customer_request',
  'phone_number',
  'duration',
  'done',
  'general_success',
  'disconnection_reason',
  'call_summary',
  'transcript',
  'audio_file_url',
  'final_score',
  'employee_id',
  'note',
  'extracted_data',
  'direction',
  'outbound_call_id',
  'experiment_id',
  'variant',
  'is_purged',
  'purged_at',
  'deleted_at',
  'created_at',
  'updated_at',
] as const satisfies readonly Exclude<keyof CallRow, 'employee_name'>[];

/** The call object of the post-call webhook (spec, Events): transcript as a JSON string. */
export function toEventCall(row: CallRow) {
  return {
    id: row.id,
    call_id: row.call_id,
    customer_name: row.customer_name,
    customer_request: row.customer_request,
    phone_number: row.phone_number,
    duration: row.duration,
    done: row.done,
    general_success: row.general_success,
    disconnection_reason: row.disconnection_reason,
    call_summary: row.call_summary,
    transcript: row.transcript === null ? null : JSON.stringify(row.transcript),
    employee: row.employee_id && row.employee_name ? { id: row.employee_id, name: row.employee_name } : null,
    agent_id: row.agent_id,
    created_at: row.created_at,
    extracted_data: row.extracted_data,
    direction: row.direction,
    outbound_call_id: row.outbound_call_id,
    experiment_id: row.experiment_id,
    variant: row.variant,
  };
}

/** A call record of the API: the webhook's call object plus note, trash and purge state. */
export function toCall(row: CallRow) {
  return {
    ...toEventCall(row),
    employee_id: row.employee_id,
    note: row.note,
    is_purged: row.is_purged,
    deleted_at: row.deleted_at,
    updated_at: row.updated_at,
    audio_file_url: row.audio_file_url,
    final_score: row.final_score,
  };
}

/** What a list item leaves out: GET one call has them. Lists do not even read them (a transcript can be kilobytes). */
const DETAIL_COLUMNS = ['transcript', 'audio_file_url', 'final_score'] as const;
type DetailColumn = (typeof DETAIL_COLUMNS)[number];
export type CallListRow = Omit<CallRow, DetailColumn>;

/**
 * A call of a list: the call record without transcript, recording and score, same fields in the same
 * order. Written out field by field because it runs for every row of every page: leaving the fields
 * out of `toCall` with a rest pattern cost more per row than the rest of the mapping and left objects
 * that serialise slowly (see `npm run bench -- calls`). A unit test keeps the two in step.
 */
export function toCallListItem(row: CallListRow) {
  return {
    id: row.id,
    call_id: row.call_id,
    customer_name: row.customer_name,
    customer_request: row.customer_request,
    phone_number: row.phone_number,
    duration: row.duration,
    done: row.done,
    general_success: row.general_success,
    disconnection_reason: row.disconnection_reason,
    call_summary: row.call_summary,
    employee: row.employee_id && row.employee_name ? { id: row.employee_id, name: row.employee_name } : null,
    agent_id: row.agent_id,
    created_at: row.created_at,
    extracted_data: row.extracted_data,
    direction: row.direction,
    outbound_call_id: row.outbound_call_id,
    experiment_id: row.experiment_id,
    variant: row.variant,
    employee_id: row.employee_id,
    note: row.note,
    is_purged: row.is_purged,
    deleted_at: row.deleted_at,
    updated_at: row.updated_at,
  };
}

export type Call = ReturnType<typeof toCall>;
export type CallListItem = ReturnType<typeof toCallListItem>;

/** A call's columns and its employee's name: what every read of whole calls selects. */
const ROW_COLUMNS = [...CALL_COLUMNS.map((column) => `c.${column}`), 'e.name as employee_name'];
/** The columns of a list's rows. */
const LIST_COLUMNS = CALL_COLUMNS.filter((column) => !(DETAIL_COLUMNS as readonly string[]).includes(column));
/** The same for a list's rows. */
const LIST_ROW_COLUMNS = [...LIST_COLUMNS.map((c) => `c.${c}`), 'e.name as employee_name'];

/**
 * The list's filters on a query over `calls as c` (already scoped to an agent or an organization):
 * trash, done, time range, phone number, search and `extracted.<name>`. Statistics and export use
 * the same conditions, so their counts are the list's.
 */
export function whereCallFilters(
  query: Knex.QueryBuilder,
  filters: ListCallsFilters,
  range: TimeRange,
): Knex.QueryBuilder {
  if (!filters.include_deleted) query.whereNull('c.deleted_at');
  if (filters.done !== undefined) query.where('c.done', filters.done);
  if (range.from) query.where('c.created_at', '>=', range.from);
  if (range.before) query.where('c.created_at', '<', range.before);
  if (filters.phone_number) query.where('c.phone_number', callerNumberOf(filters.phone_number));
  if (filters.search) whereContains(query, filters.search);
  for (const filter of filters.extracted ?? []) whereExtracted(query, filter);
  return query;
}

/**
 * Case-insensitive: caller name and number, request, summary, note and the transcript's text.
 * The first condition is the trigram-indexed text of all of them (it narrows); the second keeps
 * the answer exact (no match across two fields).
 */
function whereContains(query: Knex.QueryBuilder, text: string): void {
  const pattern = containsPattern(text.trim());
  query.whereRaw(
    `call_search_text(c.customer_name, c.phone_number, c.customer_request, c.call_summary, c.note, c.transcript) ILIKE ?`,
    [pattern],
  );
  query.where((q) =>
    q
      .whereILike('c.customer_name', pattern)
      .orWhereILike('c.phone_number', pattern)
      .orWhereILike('c.customer_request', pattern)
      .orWhereILike('c.call_summary', pattern)
      .orWhereILike('c.note', pattern)
      .orWhereRaw(`EXISTS (SELECT 1 FROM jsonb_array_elements(c.transcript) e WHERE e->>'text' ILIKE ?)`, [pattern]),
  );
}

/**
 * `calls c`'s extracted_data without its free-text outcomes (fields of type string), which may name
 * people; the typed ones (enum, boolean, number, date) stay for statistics. Used where a call's
 * personal data goes: the retention purge and a data subject's erasure.
 */
export const WITHOUT_FREE_TEXT_OUTCOMES = `c.extracted_data - ARRAY(
    SELECT f->>'name' FROM agents fa, jsonb_array_elements(fa.analysis_fields) f
     WHERE fa.id = c.agent_id AND f->>'type' = 'string')`;

/**
 * One `extracted.<name>` condition. Equality is containment (`@>`), which the GIN index on
 * extracted_data serves; a bound compares only values of the field's type (a value stored before the
 * field changed type never matches, and never fails a cast).
 */
function whereExtracted(query: Knex.QueryBuilder, filter: ExtractedFilter): void {
  if (filter.op === 'eq') {
    query.whereRaw('c.extracted_data @> ?::jsonb', [JSON.stringify({ [filter.name]: filter.value })]);
    return;
  }
  const operator = filter.op === 'gte' ? '>=' : '<=';
  if (filter.type === 'number') {
    query.whereRaw(
      `CASE WHEN jsonb_typeof(c.extracted_data -> ?) = 'number' THEN (c.extracted_data ->> ?)::numeric END ${operator} ?::numeric`,
      [filter.name, filter.name, filter.value],
    );
  } else {
    query.whereRaw(
      `CASE WHEN jsonb_typeof(c.extracted_data -> ?) = 'string' THEN (c.extracted_data ->> ?) COLLATE "C" END ${operator} ?`,
      [filter.name, filter.name, filter.value],
    );
  }
}

/** SQL for the sum of scalar subqueries given as bindings (0 for none). */
function sumOf(parts: readonly unknown[]): string {
  return parts.length === 0 ? '0' : parts.map(() => 'coalesce((?), 0)').join(' + ');
}

/**
 * From this offset on, a numbered page is found through the call counters (`deepCut`): reading a
 * year of an agent's day counters costs about what walking this many index entries does (the
 * calls scenario's pages 251 to 1,001 at 1M calls).
 */
export const DEEP_OFFSET = 10_000;

const LIST_ORDER = [
  { column: 'c.created_at', order: 'desc' as const },
  { column: 'c.id', order: 'desc' as const },
];

/** What the list statement returns besides the total: a list item's columns and its position. */
const PAGE_COLUMNS = [...LIST_COLUMNS, 'employee_name', 'position_at'].map((column) => `p.${column}`);

/**
 * The most ids a page selects, as a constant in the statement: a cursor page's limit and one more.
 * The page's own limit is applied above it as a value, so each shape is one statement whatever the
 * limit, and a plan made without the values (planOnce) still expects a page of rows, not a tenth
 * of the agent's calls (PostgreSQL's guess for an unknown limit, which made it hash a million rows
 * to find twenty).
 */
const PAGE_IDS_AT_MOST = MAX_LIMIT + 1;

/** The most ids a numbered page walks before DEEP_OFFSET (deeper pages start from the counters). */
const WALKED_IDS_AT_MOST = DEEP_OFFSET + PAGE_IDS_AT_MOST;

/**
 * Whether a list statement is prepared, so that each connection plans its shape once (PostgreSQL
 * switches to one generic plan after five runs whose plans cost the same). Planning a statement over
 * every month's partition and its indexes cost several times its execution for a page. Only filters
 * whose best plan does not depend on how many calls they match: the agent's calls in list order,
 * done and trash. A phone number, an outcome or a search can match one call or all of them, and a
 * time range prunes months when it is planned with its values.
 */
function planOnce(filters: ListCallsFilters): boolean {
  return (
    !filters.phone_number &&
    !filters.search &&
    (filters.extracted?.length ?? 0) === 0 &&
    filters.from === undefined &&
    filters.to === undefined
  );
}

/**
 * What a call's text columns weigh uncompressed, in bytes: about what its row takes in memory and
 * in an export (quoting aside). The stored size would be the compressed one (a megabyte of one
 * repeated word is kept in a few kilobytes). octet_length reads a text's raw size from its header;
 * a jsonb value has no such function, and `|| '[]'` (or `'{}'`) decompresses it into a new value of
 * the same size, about forty times cheaper than writing it as text to measure that.
 */
function textBytes(sizes: readonly string[]): string {
  return sizes.map((size) => `coalesce(${size}, 0)`).join(' + ');
}
const LIST_TEXT_SIZES = [
  'octet_length(c.customer_name)',
  'octet_length(c.customer_request)',
  'octet_length(c.phone_number)',
  'octet_length(c.disconnection_reason)',
  'octet_length(c.call_summary)',
  'octet_length(c.note)',
  `pg_column_size(c.extracted_data || '{}'::jsonb)`,
];
const WHOLE = {
  columns: ROW_COLUMNS,
  bytes: textBytes([
    ...LIST_TEXT_SIZES,
    'octet_length(c.audio_file_url)',
    `pg_column_size(c.transcript || '[]'::jsonb)`,
  ]),
};
const LIST = { columns: LIST_ROW_COLUMNS, bytes: textBytes(LIST_TEXT_SIZES) };

/** Keys of the calls read per statement by callsInBatches: a few dozen bytes each. */
const KEY_PAGE = 1000;

type CallKey = { id: string; position_at: string; bytes: number };

/** `keys` cut into runs of at most `maxBytes` in all; a bigger call is a run of its own. */
export function groupBySize<K extends { bytes: number }>(keys: readonly K[], maxBytes: number): K[][] {
  const groups: K[][] = [];
  let group: K[] = [];
  let bytes = 0;
  for (const key of keys) {
    if (group.length > 0 && bytes + key.bytes > maxBytes) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(key);
    bytes += key.bytes;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * The whole calls of `scope` (a query over `calls as c` on the database it is given, scoped to an
 * organization), ordered by (created_at, id) in `direction`, in batches of at most `maxBytes` of
 * text (a bigger call comes alone): a page of keys with each call's size, then each batch's rows by
 * id, with `scope` again. Memory is one batch however large the calls, and every statement is short,
 * so a slow reader holds no connection (the pool stays free for other requests) and no snapshot. A
 * call changed between its key and its row is read as it is then, and left out if it no longer
 * matches. Each statement runs through `on` (a replica's, which may hand the rest to the primary):
 * a statement starts from the last key read, so it needs nothing from the statements before it.
 */
export function callsInBatches(
  on: Statements,
  scope: (db: Db) => Knex.QueryBuilder,
  direction: 'asc' | 'desc',
  maxBytes: number,
): AsyncGenerator<CallRow[]> {
  return inBatches<CallRow>(on, scope, direction, maxBytes, WHOLE);
}

/** callsInBatches with the columns of a list item: no transcript is read at all. */
export function callListRowsInBatches(
  on: Statements,
  scope: (db: Db) => Knex.QueryBuilder,
  direction: 'asc' | 'desc',
  maxBytes: number,
): AsyncGenerator<CallListRow[]> {
  return inBatches<CallListRow>(on, scope, direction, maxBytes, LIST);
}

async function* inBatches<R>(
  on: Statements,
  scope: (db: Db) => Knex.QueryBuilder,
  direction: 'asc' | 'desc',
  maxBytes: number,
  read: { columns: readonly string[]; bytes: string },
): AsyncGenerator<R[]> {
  const order = [
    { column: 'c.created_at', order: direction },
    { column: 'c.id', order: direction },
  ];
  const past = direction === 'desc' ? '<' : '>';
  let after: CallKey | undefined;
  for (;;) {
    const from = after;
    const keys: CallKey[] = await on(async (db) => {
      const page = scope(db);
      if (from) page.whereRaw(`(c.created_at, c.id) ${past} (?::timestamptz, ?::uuid)`, [from.position_at, from.id]);
      return page
        .select(
          'c.id',
          // To the microsecond (a JS Date has milliseconds): the next page starts exactly after this call.
          db.raw(`to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`),
          db.raw(`(${read.bytes})::int AS bytes`),
        )
        .orderBy(order)
        .limit(KEY_PAGE);
    });
    for (const group of groupBySize(keys, maxBytes)) {
      // The group's time span too: the ids alone would be looked for in every monthly partition
      // (about 50 ms a group of 1,000 over a year's months; `npm run bench -- calls`, export).
      const [first, last] = [group[0]!.position_at, group[group.length - 1]!.position_at];
      const rows: R[] = await on(async (db) =>
        scope(db)
          .leftJoin('employees as e', 'e.id', 'c.employee_id')
          .whereRaw(
            'c.created_at BETWEEN ?::timestamptz AND ?::timestamptz',
            direction === 'desc' ? [last, first] : [first, last],
          )
          .whereIn(
            'c.id',
            group.map((key) => key.id),
          )
          .select(...read.columns)
          .orderBy(order),
      );
      if (rows.length > 0) yield rows;
    }
    if (keys.length < KEY_PAGE) return;
    after = keys[keys.length - 1];
  }
}

/** The unique key of (agent_id, call_id) across all monthly partitions of calls. */
export const CALL_KEY_UNIQUE = 'call_keys_pkey';

/** An insert of a call_id the agent already has (CallRepository.insert). */
export function isCallKeyConflict(error: unknown): boolean {
  return isUniqueViolation(error, CALL_KEY_UNIQUE);
}

/**
 * The call's experiment assignment (`column` of it, none without one): the variant the routing
 * answer assigned to the call_id (experiment_assignments, keyed by organization and call_id), when
 * the experiment is the agent's (a call the dialled agent forwarded to another one did not run the
 * variant). The arguments are the placeholders of organization, call_id and agent.
 */
const assigned = (column: 'experiment_id' | 'variant', org: string, callId: string, agent: string) =>
  `(SELECT a.${column} FROM experiment_assignments a JOIN experiments x ON x.id = a.experiment_id
     WHERE a.organization_id = ${org} AND a.call_id = ${callId} AND x.agent_id = ${agent})`;

/** What an intake's insert finds itself (IntakeCall). */
const FOUND_BY_INSERT = ['deleted_at', 'experiment_id', 'variant'] as const;

/**
 * What an intake's call takes from elsewhere, read by its insert itself (one round trip per intake,
 * none before it): a done call goes to the trash when its organization auto-deletes done calls, and
 * the call carries its experiment assignment.
 */
export type IntakeCall = Omit<NewCall, (typeof FOUND_BY_INSERT)[number]>;

/** The columns an intake gives, in the order of its insert's values. */
const INTAKE_COLUMNS = CALL_COLUMNS.filter(
  (column): column is keyof IntakeCall | 'id' =>
    !(FOUND_BY_INSERT as readonly string[]).includes(column) && column !== 'is_purged' && column !== 'purged_at',
);
const at = (column: (typeof INTAKE_COLUMNS)[number]) => `$${INTAKE_COLUMNS.indexOf(column) + 1}`;
const [ORG, CALL_ID, AGENT] = [at('organization_id'), at('call_id'), at('agent_id')];

/**
 * The intake's insert, written once (knex compiled it on every call, a tenth of the intake's CPU,
 * `npm run bench -- calls` intake): INTAKE_COLUMNS' values, then whether the call goes to the trash
 * if its organization auto-deletes done calls.
 */
const INTAKE_INSERT_SQL =
  `INSERT INTO calls (${[...INTAKE_COLUMNS, ...FOUND_BY_INSERT].join(', ')}) ` +
  `VALUES (${INTAKE_COLUMNS.map((column) => at(column)).join(', ')}, ` +
  `CASE WHEN $${INTAKE_COLUMNS.length + 1}::boolean AND ` +
  `(SELECT o.auto_delete_done_calls FROM organizations o WHERE o.id = ${ORG}) THEN ${at('created_at')}::timestamptz END, ` +
  `${assigned('experiment_id', ORG, CALL_ID, AGENT)}, ${assigned('variant', ORG, CALL_ID, AGENT)}) ` +
  `RETURNING ${CALL_COLUMNS.join(', ')}`;

/** The call.completed payload of an intake: `$1`, with the experiment its insert finds. */
const INTAKE_EVENT_PAYLOAD_SQL = `jsonb_set(jsonb_set($1::jsonb, '{call,experiment_id}',
    coalesce(to_jsonb(${assigned('experiment_id', '$2', '$3', '$4')}), 'null')),
  '{call,variant}', coalesce(to_jsonb(${assigned('variant', '$2', '$3', '$4')}), 'null'))`;

export class CallRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Db | Knex.Transaction): CallRepository {
    return new CallRepository(trx);
  }

  /**
   * Inserts unless the agent already has this call_id; undefined = it existed. The monthly
   * partitions cannot hold a unique key without the month, so `call_keys` (filled by a trigger)
   * holds the pair: a repeat fails its key inside a savepoint, which is rolled back.
   */
  /**
   * Inserts a new call. A call_id the agent already has fails the statement (isCallKeyConflict) and
   * with it the caller's transaction: the intake has no savepoint around it (two round trips fewer
   * per call) and reads the stored call after that transaction ended.
   */
  async insert(call: NewCall): Promise<CallRow> {
    const [row] = await this.insertQuery(call, timeId(call.created_at));
    return row as CallRow;
  }

  /**
   * An intake's insert as a statement (`$n` values) for a caller that runs it as part of its own
   * (CallService.intake: with the call's event), and the id it gives the call. The statement reads
   * the organization's auto_delete_done_calls and the call's experiment assignment (IntakeCall):
   * `trash`, the call goes to the trash if its organization auto-deletes done calls.
   */
  insertStatement(call: IntakeCall, trash: boolean): { id: string; text: string; values: unknown[] } {
    const id = timeId(call.created_at);
    const values: unknown[] = INTAKE_COLUMNS.map((column) => {
      if (column === 'id') return id;
      // As knex stores them: the driver would make an array a PostgreSQL array.
      if (column === 'transcript') return call.transcript === null ? null : JSON.stringify(call.transcript);
      if (column === 'extracted_data') return JSON.stringify(call.extracted_data);
      return call[column];
    });
    values.push(trash);
    return { id, text: INTAKE_INSERT_SQL, values };
  }

  /**
   * The call.completed payload of an intake (`NewEvent.payloadSql`): `call`'s experiment_id and
   * variant as its insert finds them, in the same statement.
   */
  intakeEventPayload(call: IntakeCall): Statement {
    return { text: INTAKE_EVENT_PAYLOAD_SQL, values: [call.organization_id, call.call_id, call.agent_id] };
  }

  private insertQuery(call: NewCall, id: string): Knex.QueryBuilder {
    return this.db('calls')
      .insert({
        ...call,
        // Carries created_at: a lookup by this id plans only its month (src/db/time-ids.ts).
        id,
        transcript: call.transcript === null ? null : JSON.stringify(call.transcript),
        extracted_data: JSON.stringify(call.extracted_data),
      })
      .returning(CALL_COLUMNS);
  }

  /** Calls of the agent with the linked employee's name. */
  private scoped(agent: AgentRef): Knex.QueryBuilder {
    return this.db('calls as c')
      .leftJoin('employees as e', 'e.id', 'c.employee_id')
      .where({ 'c.agent_id': agent.id, 'c.organization_id': agent.organization_id })
      .select(...ROW_COLUMNS);
  }

  async findByCallId(agent: AgentRef, callId: string): Promise<CallRow | undefined> {
    return this.scoped(agent).where('c.call_id', callId).first();
  }

  async find(agent: AgentRef, id: string): Promise<CallRow | undefined> {
    return whereId(this.scoped(agent), id, 'c.').first();
  }

  /** Row lock until the caller's transaction ends: call it on `with(trx)`. */
  async lock(agent: AgentRef, id: string): Promise<CallRow | undefined> {
    return whereId(this.scoped(agent), id, 'c.').forUpdate('c').first();
  }

  async update(agent: AgentRef, id: string, changes: Partial<CallRow>): Promise<CallRow> {
    const columns: Record<string, unknown> = { ...changes };
    if (changes.extracted_data !== undefined) columns.extracted_data = JSON.stringify(changes.extracted_data);
    await whereId(this.db('calls').where({ agent_id: agent.id, organization_id: agent.organization_id }), id).update(
      columns,
    );
    return (await this.find(agent, id))!;
  }

  /** The name of `employeeId` when it is an employee of the agent. */
  async employeeName(agent: AgentRef, employeeId: string): Promise<string | undefined> {
    const row = await this.db('employees').where({ id: employeeId, agent_id: agent.id }).first('name');
    return row?.name;
  }

  /** Whether `jobId` is an outbound call job of the agent. */
  async isOutboundJobOf(agent: AgentRef, jobId: string): Promise<boolean> {
    const row = await this.db('outbound_jobs')
      .where({ id: jobId, agent_id: agent.id, organization_id: agent.organization_id })
      .first('id');
    return row !== undefined;
  }

  async autoDeleteDoneCalls(organizationId: string): Promise<boolean> {
    const row = await this.db('organizations').where({ id: organizationId }).first('auto_delete_done_calls');
    return row?.auto_delete_done_calls === true;
  }

  /**
   * Newest first; trashed calls only with `include_deleted`. A page is picked by number or by
   * keyset cursor; either way the ids are pageIds on the calls indexes alone and only the page's rows
   * are read in full. The exact total comes from the per-day counters when no text filter applies.
   * Page and total are one statement: the total is a one-row CTE that the page's rows join (an
   * empty page is one row of total alone).
   *
   * With `search` the matching calls are collected once (a materialised CTE, found through the
   * trigram index) and both total and page are taken from them. Counting them was needed anyway,
   * and the page can then never be picked by walking the agent's calls in list order and testing
   * each: the planner chose that whenever its statistics made the searched text look common (after
   * some ANALYZE runs, not others), and for a rare name among a million calls it took seconds instead
   * of milliseconds.
   *
   * `rowsOnly` counts the matching calls for the total instead of reading counters (`total`).
   */
  async list(
    agent: AgentRef,
    filters: ListCallsFilters,
    paging: PageParams | CursorParams,
    rowsOnly = false,
  ): Promise<CursorPage<CallListItem>> {
    const range = timeRange(filters.from, filters.to);
    const matches = filters.search ? this.filtered(agent, filters, range).select('c.id', 'c.created_at') : undefined;
    const ids = (matches ? this.db('matches as c') : this.filtered(agent, filters, range))
      .select('c.id', 'c.created_at')
      .orderBy(LIST_ORDER);
    let cut: Knex.Raw | undefined;
    let idsAtMost: Knex.QueryBuilder | Knex.Raw = ids;
    if ('page' in paging) {
      const offset = (paging.page - 1) * paging.limit;
      // Past the end the page is empty: known from the total without walking `offset` index entries.
      if (offset > 0) ids.whereRaw('? < (SELECT total FROM t)', [offset]);
      cut = offset >= DEEP_OFFSET && !matches ? this.deepCut(agent, filters, range, offset) : undefined;
      if (cut) {
        // `(SELECT ... ORDER BY ...) OFFSET n LIMIT m` is one SELECT with that offset and limit.
        ids.whereRaw('c.created_at < (SELECT at FROM cut)');
        idsAtMost = this.db.raw(`? OFFSET (SELECT (?::bigint - newer)::bigint FROM cut) LIMIT ${PAGE_IDS_AT_MOST}`, [
          ids,
          offset,
        ]);
      } else if (offset > 0 && offset < DEEP_OFFSET) {
        // The walk is bounded by a constant and the offset taken from it as a value. A prepared
        // statement's generic plan assumes an unknown offset skips a tenth of its input: a tenth of
        // the agent's calls made it cost more than any custom plan, so PostgreSQL planned every page
        // again (a few ms over the months' partitions); a tenth of the bound costs less than them.
        ids.limit(WALKED_IDS_AT_MOST, { skipBinding: true });
        idsAtMost = this.db.raw(
          `SELECT id, created_at FROM (?) walked ORDER BY created_at DESC, id DESC OFFSET ? LIMIT ${PAGE_IDS_AT_MOST}`,
          [ids, offset],
        );
      } else ids.limit(PAGE_IDS_AT_MOST, { skipBinding: true }).offset(offset);
    } else {
      // The bound on created_at alone lets PostgreSQL leave out the months after the cursor's.
      if (paging.cursor)
        ids.whereRaw('c.created_at <= ?::timestamptz AND (c.created_at, c.id) < (?::timestamptz, ?::uuid)', [
          paging.cursor.at,
          paging.cursor.at,
          paging.cursor.id,
        ]);
      ids.limit(PAGE_IDS_AT_MOST, { skipBinding: true });
    }
    // The limit a plan is made for is a constant, the page's own limit a value (see planOnce).
    const pageIds = this.db.raw('SELECT id, created_at FROM (?) ids ORDER BY created_at DESC, id DESC LIMIT ?', [
      idsAtMost,
      'page' in paging ? paging.limit : paging.limit + 1,
    ]);
    // The page's ids once, then their rows by primary key. As `c.id IN (...)` beside the agent's own
    // conditions, the planner could scan all the agent's calls per page id when its estimates are
    // stale (a newly busy agent before ANALYZE), many times the reads by key. With its created_at
    // each id is looked up in its month's partition only, not in every month's.
    const pageRows = this.db('page')
      .join('calls as c', (on) => on.on('c.id', 'page.id').andOn('c.created_at', 'page.created_at'))
      .leftJoin('employees as e', 'e.id', 'c.employee_id')
      .where('c.organization_id', agent.organization_id)
      .select(...LIST_ROW_COLUMNS)
      .select(this.db.raw(`to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`));
    const query = matches ? this.db.withMaterialized('matches', matches) : this.db.queryBuilder();
    const counted = matches
      ? this.db.raw('SELECT count(*) AS total FROM matches')
      : this.total(agent, filters, range, rowsOnly);
    query.with('t', counted);
    if (cut) query.with('cut', cut);
    query
      .withMaterialized('page', pageIds)
      .from('t')
      .leftJoin(pageRows.as('p'), this.db.raw('true'))
      .select('t.total', ...PAGE_COLUMNS)
      .orderBy([
        { column: 'p.created_at', order: 'desc' },
        { column: 'p.id', order: 'desc' },
      ]);
    type Row = CallListRow & { position_at: string | null; total: string | null };
    const rows = (
      planOnce(filters) ? (await runPreparedQuery(this.db, 'calls_list', query)).rows : await query
    ) as Row[];
    // The outcome's counters were gone in this statement's snapshot (outcomeTotal): the calls are counted.
    if (rows[0]!.total === null) return this.list(agent, filters, paging, true);
    const total = Number(rows[0]!.total);
    const page = rows.filter((row) => row.id !== null).slice(0, paging.limit);
    const last = page[page.length - 1];
    const more = 'page' in paging ? (paging.page - 1) * paging.limit + page.length < total : rows.length > paging.limit;
    return {
      data: page.map(toCallListItem),
      pagination: cursorPagination(paging, total, more && last ? { at: last.position_at!, id: last.id } : undefined),
    };
  }

  /**
   * Where a deep numbered page starts, from the counters, as one row `(at, newer)`: `newer` of the
   * matching calls are created at or after `at` and no more than `offset`, so the page is the
   * calls before `at` from position `offset - newer` on. The calls before `at` are then walked
   * through within one hour (at most the calls of the partial hours at the range's edges) instead
   * of `offset` entries of every month's index: whole days are summed from call_day_counts, the day
   * that holds position `offset` from its hours in call_hour_stats. Counters and calls are read in
   * the list's one statement, so they agree. Undefined when the counters do not split the filters
   * (phone number, outcomes, search) or the range holds no whole hour: the page is walked to.
   */
  private deepCut(agent: AgentRef, filters: ListCallsFilters, range: TimeRange, offset: number): Knex.Raw | undefined {
    if (filters.phone_number || filters.search || (filters.extracted?.length ?? 0) > 0) return undefined;
    const plan = skipPlan(range);
    if (!plan) return undefined;
    const raw = (sql: string) => this.db.raw(sql);
    const counters = (table: string) => {
      const query = this.db(table).where({ agent_id: agent.id, organization_id: agent.organization_id });
      if (filters.done !== undefined) query.where('done', filters.done);
      if (!filters.include_deleted) query.where('deleted', false);
      return query;
    };
    // Each part is (up, n, is_day): n matching calls created in [up - its span, up).
    const hours = (r: TimeRange) => {
      const query = counters('call_hour_stats')
        .groupBy('hour')
        .select(raw(`hour + interval '1 hour' AS up`), raw('sum(calls) AS n'), raw('false AS is_day'));
      if (r.from) query.where('hour', '>=', r.from);
      if (r.before) query.where('hour', '<', r.before);
      return query;
    };
    const parts: (Knex.QueryBuilder | Knex.Raw)[] = [];
    if (plan.top)
      parts.push(
        this.db.raw('SELECT ?::timestamptz AS up, (?) AS n, false AS is_day', [
          plan.top.before,
          this.filtered(agent, filters, plan.top).count('*'),
        ]),
      );
    if (plan.upperHours) parts.push(hours(plan.upperHours));
    if (plan.days) {
      const days = counters('call_day_counts')
        .groupBy('day')
        .select(raw(`(day + 1)::timestamp AT TIME ZONE 'UTC' AS up`), raw('sum(calls) AS n'), raw('true AS is_day'));
      if (plan.days.from) days.where('day', '>=', plan.days.from);
      if (plan.days.before) days.where('day', '<', plan.days.before);
      parts.push(days);
    }
    if (plan.lowerHours) parts.push(hours(plan.lowerHours));
    // The hours of the day that `hit` found (24 h: a UTC day, whatever the session's time zone).
    const dayHours = hours({}).whereRaw(`hit.is_day AND hour >= hit.up - interval '24 hours' AND hour < hit.up`);
    // Past every counted part: the walk starts at the floor (nothing is left when the range is open below).
    return this.db.raw(
      `WITH seg AS (${parts.map(() => '?').join(' UNION ALL ')}),
            acc AS (SELECT up, n, is_day, sum(n) OVER (ORDER BY up DESC) AS through FROM seg),
            hit AS (SELECT up, is_day, through - n AS newer FROM acc WHERE through > ? ORDER BY up DESC LIMIT 1)
       SELECT at, newer FROM (
         SELECT coalesce(h.up, hit.up) AS at, coalesce(h.newer, hit.newer) AS newer, 0 AS pick
           FROM hit LEFT JOIN LATERAL (
             SELECT up, through - n AS newer
               FROM (SELECT up, n, hit.newer + sum(n) OVER (ORDER BY up DESC) AS through FROM (?) d) x
              WHERE through > ? ORDER BY up DESC LIMIT 1) h ON true
         UNION ALL
         SELECT ?::timestamptz, (SELECT coalesce(sum(n), 0) FROM seg), 1
       ) c ORDER BY pick LIMIT 1`,
      [...parts, offset, dayHours, offset, plan.floor ?? '-infinity'],
    );
  }

  /** The agent's calls matching the filters, time range given apart (the count splits it). */
  private filtered(agent: AgentRef, filters: ListCallsFilters, range: TimeRange): Knex.QueryBuilder {
    const query = this.db('calls as c').where({ 'c.agent_id': agent.id, 'c.organization_id': agent.organization_id });
    return whereCallFilters(query, filters, range);
  }

  /**
   * Exact: counters for whole days, rows for the partial days at the edges. One `extracted.<name>=`
   * on an enum or boolean field: the outcome counters for whole hours, rows for the partial hours at
   * the edges (`outcomeTotal`). Any other outcome filter or a phone number counts rows (a search is
   * counted from its matches, in `list`), and so does `rowsOnly`. One row `(total)`, however many
   * parts: a part is a scalar subquery of the sum.
   */
  private total(agent: AgentRef, filters: ListCallsFilters, range: TimeRange, rowsOnly: boolean): Knex.Raw {
    const countRows = (r: TimeRange) => this.filtered(agent, filters, r).count('*');
    const outcome = filters.phone_number || rowsOnly ? undefined : countedOutcomeFilter(filters.extracted);
    if (outcome) return this.outcomeTotal(agent, filters, range, outcome);
    const parts: Knex.QueryBuilder[] = [];
    if (filters.phone_number || (filters.extracted?.length ?? 0) > 0) parts.push(countRows(range));
    else {
      const plan = countPlan(range);
      parts.push(...plan.edges.map(countRows));
      if (plan.days) {
        const days = this.db('call_day_counts').where({ agent_id: agent.id, organization_id: agent.organization_id });
        if (plan.days.from) days.where('day', '>=', plan.days.from);
        if (plan.days.before) days.where('day', '<', plan.days.before);
        if (filters.done !== undefined) days.where('done', filters.done);
        if (!filters.include_deleted) days.where('deleted', false);
        parts.push(days.sum('calls'));
      }
    }
    return this.db.raw(`SELECT ${sumOf(parts)} AS total`, parts);
  }

  /**
   * The total of one counted outcome condition from the outcome counters: day rows for the whole UTC
   * days (call_outcome_day_stats), hour rows for the whole hours beside them, the calls for the
   * partial hours at the edges. The counters are those of the field as the database defines it in
   * this statement's snapshot: should the field have just stopped being enum or boolean (its
   * counters dropped), the total is NULL and `list` runs again counting the calls. Counting them in
   * this statement's ELSE instead doubled its planning (every month's partition and indexes once
   * more, about 5 ms of 10 on a 2-vCPU machine) for a branch that hardly ever runs.
   */
  private outcomeTotal(
    agent: AgentRef,
    filters: ListCallsFilters,
    range: TimeRange,
    outcome: ExtractedFilter,
  ): Knex.Raw {
    const plan = hourPlan(range);
    const parts: Knex.QueryBuilder[] = plan.edges.map((r) => this.filtered(agent, filters, r).count('*'));
    const counted = filters.done === undefined ? 'calls' : filters.done ? 'done_calls' : 'calls - done_calls';
    const counters = (table: string, column: string, from?: Date | string, before?: Date | string) => {
      const query = this.db(table)
        .where({ agent_id: agent.id, organization_id: agent.organization_id, name: outcome.name })
        .whereRaw('value = ?::jsonb', [JSON.stringify(outcome.value)]);
      if (from) query.where(column, '>=', from);
      if (before) query.where(column, '<', before);
      if (!filters.include_deleted) query.where('deleted', false);
      parts.push(query.select(this.db.raw(`sum(${counted})`)));
    };
    if (plan.hours) {
      const { lowerHours, days, upperHours } = dayPlan(plan.hours);
      for (const hours of [lowerHours, upperHours])
        if (hours) counters('call_outcome_hour_stats', 'hour', hours.from, hours.before);
      if (days) counters('call_outcome_day_stats', 'day', days.from, days.before);
    }
    const isCounted = this.db('agents')
      .where({ id: agent.id })
      .whereRaw('? = ANY(counted_outcome_names(analysis_fields))', [outcome.name])
      .select(this.db.raw('1'));
    return this.db.raw(`SELECT CASE WHEN EXISTS (?) THEN ${sumOf(parts)} END AS total`, [isCounted, ...parts]);
  }

  /**
   * Every whole call matching the filters, newest first, in batches of at most `maxBytes` of text
   * (callsInBatches).
   */
  exportRows(agent: AgentRef, filters: ListCallsFilters, maxBytes: number, on?: Statements): AsyncGenerator<CallRow[]> {
    return callsInBatches(on ?? statementsOn(this.db), this.exportScope(agent, filters), 'desc', maxBytes);
  }

  /** The same as list items: without the transcript, which is then never read. */
  exportListRows(
    agent: AgentRef,
    filters: ListCallsFilters,
    maxBytes: number,
    on?: Statements,
  ): AsyncGenerator<CallListRow[]> {
    return callListRowsInBatches(on ?? statementsOn(this.db), this.exportScope(agent, filters), 'desc', maxBytes);
  }

  private exportScope(agent: AgentRef, filters: ListCallsFilters): (db: Db) => Knex.QueryBuilder {
    const range = timeRange(filters.from, filters.to);
    return (db) =>
      whereCallFilters(
        db('calls as c').where({ 'c.agent_id': agent.id, 'c.organization_id': agent.organization_id }),
        filters,
        range,
      );
  }

  /**
   * How many times `phoneNumber` called the agent in [dayStart, dayEnd), trashed calls included.
   * For the greeting variants' `min_calls_today`.
   */
  async countCallsToday(agent: AgentRef, phoneNumber: string, dayStart: Date, dayEnd: Date): Promise<number> {
    const row = await this.db('calls')
      .where({
        agent_id: agent.id,
        organization_id: agent.organization_id,
        phone_number: callerNumberOf(phoneNumber),
      })
      .andWhere('created_at', '>=', dayStart)
      .andWhere('created_at', '<', dayEnd)
      .count({ n: '*' })
      .first();
    return Number(row?.n ?? 0);
  }

  /**
   * Removes the personal data of up to `batchSize` calls older than their agent's retention
   * (null = the organization's call_retention_days, 90 unless changed), and the same fields of their
   * stored call.completed bodies (events_call_id), which would otherwise keep them for ever. SKIP
   * LOCKED lets several instances run it side by side.
   */
  async purgeExpired(now: Date, batchSize: number): Promise<number> {
    const { rows } = await this.db.raw(
      `WITH expired AS (
         SELECT c.id FROM calls c JOIN agents a ON a.id = c.agent_id AND a.organization_id = c.organization_id
           JOIN organizations o ON o.id = c.organization_id
          WHERE NOT c.is_purged
            AND c.created_at < :now::timestamptz
              - make_interval(days => COALESCE(a.retention_days, o.call_retention_days, :defaultDays))
          ORDER BY c.created_at
          LIMIT :batchSize
          FOR UPDATE OF c SKIP LOCKED
       ), purged AS (
         UPDATE calls c SET transcript = NULL, phone_number = NULL, customer_name = NULL, customer_request = NULL,
                call_summary = NULL, note = NULL, audio_file_url = NULL, is_purged = true, purged_at = :now, updated_at = :now,
                extracted_data = ${WITHOUT_FREE_TEXT_OUTCOMES}
           FROM expired WHERE c.id = expired.id
         RETURNING c.id, c.organization_id, c.agent_id
       ), bodies AS (
         UPDATE events e SET payload = jsonb_set(e.payload, '{call}', (e.payload->'call') || :purged::jsonb
                || jsonb_build_object('extracted_data', (e.payload->'call'->'extracted_data') - ARRAY(
                     SELECT f->>'name' FROM agents fa, jsonb_array_elements(fa.analysis_fields) f
                      WHERE fa.id = p.agent_id AND f->>'type' = 'string')))
           FROM purged p
          WHERE e.organization_id = p.organization_id AND e.type = 'call.completed'
            AND (e.payload->'call'->>'id') = p.id::text
       )
       SELECT count(*) AS n FROM purged`,
      { now, batchSize, defaultDays: DEFAULT_RETENTION_DAYS, purged: PURGED_BODY_FIELDS },
    );
    return Number(rows[0]?.n ?? 0);
  }
}

/** The personal fields of a stored call.completed body, as retention leaves them (the call's own are NULL too). */
const PURGED_BODY_FIELDS = JSON.stringify({
  customer_name: null,
  customer_request: null,
  phone_number: null,
  call_summary: null,
  transcript: null,
});
