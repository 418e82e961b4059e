import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import {
  OTHERS_AFTER_CTES,
  preparedSql,
  runPrepared,
  runStatementPrepared,
  withStatements,
} from '../../db/prepared.js';
import { namedCtes, type Statement } from '../../db/statement.js';
import { cursorPagination, type CursorPage, type KeysetPosition } from '../../api/pagination.js';
import type { ChangeWithEvent } from '../../events/event-recorder.js';
import type { CallingWindow } from './calling-window.js';
import type { JobStatus, Outcome, Purpose } from './outbound.schemas.js';

export type Consent = { basis: string; obtained_at: string; source: string };

export type JobFields = {
  organization_id: string;
  agent_id: string;
  campaign_id: string | null;
  to_number: string;
  contact_id: string | null;
  purpose: Purpose;
  status: JobStatus;
  window: CallingWindow;
  respect_opening_hours: boolean;
  not_before: Date | null;
  not_after: Date | null;
  max_attempts: number;
  retry_after_minutes: number;
  variables: Record<string, unknown>;
  external_id: string | null;
  consent: Consent | null;
  next_attempt_at: Date | null;
  failure_reason: string | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type JobRow = JobFields & { id: string; attempt_count: number };

export type AttemptRow = {
  id: string;
  organization_id: string;
  job_id: string;
  number: number;
  outcome: Outcome | null;
  lease_expired: boolean;
  call_id: string | null;
  claimed_at: Date;
  lease_expires_at: Date;
  finished_at: Date | null;
};

export type CampaignRow = {
  id: string;
  organization_id: string;
  agent_id: string;
  name: string;
  status: 'active' | 'paused' | 'cancelled';
  purpose: Purpose;
  window: CallingWindow;
  respect_opening_hours: boolean;
  max_concurrent: number;
  max_attempts: number;
  retry_after_minutes: number;
  variables: Record<string, unknown>;
  not_before: Date | null;
  not_after: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export type DoNotCallRow = {
  organization_id: string;
  phone_number: string;
  reason: string | null;
  source: 'api' | 'call_opt_out';
  created_at: Date;
};

export type ConsentRow = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  job_id: string | null;
  phone_number: string;
  basis: string;
  obtained_at: Date;
  source: string;
  last_call_at: Date | null;
  keep_until: Date;
  created_at: Date;
};

/** The columns of a consent record, as a data subject's export reads them. */
export const CONSENT_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'job_id',
  'phone_number',
  'basis',
  'obtained_at',
  'source',
  'last_call_at',
  'keep_until',
  'created_at',
] as const satisfies readonly (keyof ConsentRow)[];

/** A consent record as the API shows it (ConsentRecordSchema). */
export function toConsentRecord(row: ConsentRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    outbound_call_id: row.job_id,
    phone_number: row.phone_number,
    basis: row.basis,
    obtained_at: iso(row.obtained_at)!,
    source: row.source,
    last_call_at: iso(row.last_call_at),
    keep_until: iso(row.keep_until)!,
    created_at: iso(row.created_at)!,
  };
}

export const JOB_EXTERNAL_ID_UNIQUE = 'outbound_jobs_agent_external_id';

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

export function toAttempt(row: AttemptRow) {
  return {
    id: row.id,
    number: row.number,
    outcome: row.outcome,
    lease_expired: row.lease_expired,
    call_id: row.call_id,
    claimed_at: iso(row.claimed_at)!,
    lease_expires_at: iso(row.lease_expires_at)!,
    finished_at: iso(row.finished_at),
  };
}

/** The columns toAttempt reads. */
const ATTEMPT_COLUMNS = [
  'id',
  'number',
  'outcome',
  'lease_expired',
  'call_id',
  'claimed_at',
  'lease_expires_at',
  'finished_at',
] as const satisfies readonly (keyof AttemptRow)[];

/** `iso` in SQL: a time as `toISOString` writes it (milliseconds cut off, as the driver's Date does). */
const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** `toAttempt` in SQL, over a row `alias` of outbound_attempts. */
function attemptJson(alias: string): string {
  return `jsonb_build_object('id', ${alias}.id, 'number', ${alias}.number, 'outcome', ${alias}.outcome,
    'lease_expired', ${alias}.lease_expired, 'call_id', ${alias}.call_id, 'claimed_at', ${isoSql(`${alias}.claimed_at`)},
    'lease_expires_at', ${isoSql(`${alias}.lease_expires_at`)}, 'finished_at', ${isoSql(`${alias}.finished_at`)})`;
}

/**
 * `toOutboundCall` in SQL, over a row `job` of outbound_jobs and the rows of its attempts
 * (`attempts`, a subquery of ATTEMPT_COLUMNS), for an event the database writes from a job it
 * changed. The two must give the same JSON: test/api/outbound.api.test.ts compares an event with
 * the API's answer for the same job.
 */
function outboundCallJson(job: string, attempts: string): string {
  const fields = OUTBOUND_CALL_FIELDS.map((name) => {
    if (name === 'attempts')
      return `'attempts', (SELECT coalesce(jsonb_agg(${attemptJson('t')} ORDER BY t.number), '[]'::jsonb) FROM ${attempts} t)`;
    return `'${name}', ${TIMES.has(name) ? isoSql(`${job}.${name}`) : `${job}."${name}"`}`;
  });
  return `jsonb_build_object(${fields.join(', ')})`;
}

/** A job's columns that an outbound call shows under the same name, in the order it shows them. */
const JOB_SETTING_COLUMNS = [
  'agent_id',
  'campaign_id',
  'to_number',
  'contact_id',
  'purpose',
  'status',
  'window',
  'respect_opening_hours',
  'not_before',
  'not_after',
  'max_attempts',
  'retry_after_minutes',
  'variables',
  'external_id',
  'consent',
  'next_attempt_at',
] as const;

/** The fields of an outbound call (toOutboundCall), those written by `iso` among them. */
const OUTBOUND_CALL_FIELDS = [
  'id',
  ...JOB_SETTING_COLUMNS,
  'failure_reason',
  'attempts',
  'finished_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof OutboundCall)[];
const TIMES = new Set<string>([
  'not_before',
  'not_after',
  'next_attempt_at',
  'finished_at',
  'created_at',
  'updated_at',
]);

export type OutboundCall = ReturnType<typeof toOutboundCall>;

export function toOutboundCall(row: JobRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    campaign_id: row.campaign_id,
    to_number: row.to_number,
    contact_id: row.contact_id,
    purpose: row.purpose,
    status: row.status,
    window: row.window,
    respect_opening_hours: row.respect_opening_hours,
    not_before: iso(row.not_before),
    not_after: iso(row.not_after),
    max_attempts: row.max_attempts,
    retry_after_minutes: row.retry_after_minutes,
    variables: row.variables,
    external_id: row.external_id,
    consent: row.consent,
    next_attempt_at: iso(row.next_attempt_at),
    failure_reason: row.failure_reason as 'deadline' | 'max_attempts' | 'no_window' | null,
    attempts: attempts.map(toAttempt),
    finished_at: iso(row.finished_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

const STATUSES: JobStatus[] = ['scheduled', 'in_progress', 'completed', 'failed', 'cancelled', 'blocked'];

export function toCampaign(
  row: CampaignRow,
  progress: { counts: Record<string, number>; lastFinishedAt: Date | null } | undefined,
) {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, progress?.counts[s] ?? 0])) as Record<JobStatus, number>;
  const total = STATUSES.reduce((sum, s) => sum + counts[s], 0);
  const open = counts.scheduled + counts.in_progress;
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    status: row.status,
    purpose: row.purpose,
    window: row.window,
    respect_opening_hours: row.respect_opening_hours,
    max_concurrent: row.max_concurrent,
    max_attempts: row.max_attempts,
    retry_after_minutes: row.retry_after_minutes,
    variables: row.variables,
    not_before: iso(row.not_before),
    not_after: iso(row.not_after),
    counters: { ...counts, total },
    finished_at: total > 0 && open === 0 ? iso(progress?.lastFinishedAt ?? null) : null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

export type Campaign = ReturnType<typeof toCampaign>;

export function toDoNotCall(row: DoNotCallRow) {
  return {
    phone_number: row.phone_number,
    reason: row.reason,
    source: row.source,
    created_at: iso(row.created_at)!,
  };
}

/** A due job as the claim sees it, with what it needs of its agent and campaign. */
export type DueJob = JobRow & {
  agent_phone_number: string;
  agent_schedule: unknown;
  agent_bundesland: string;
  agent_vacation_mode: boolean;
  agent_vacation_end: Date | null;
  campaign_max_concurrent: number | null;
  /** Jobs in progress of its agent and of its campaign (0 without one) when it was read. */
  agent_running: number;
  campaign_running: number;
  /** Its number is on the organization's do-not-call list. */
  listed: boolean;
};

const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));

/** An attempt read as JSON (to_jsonb): its times as Dates, as a plain read gives them. */
function attemptFromJson(json: Record<string, unknown>): AttemptRow {
  return {
    ...(json as AttemptRow),
    claimed_at: dateOrNull(json.claimed_at)!,
    lease_expires_at: dateOrNull(json.lease_expires_at)!,
    finished_at: dateOrNull(json.finished_at),
  };
}

/** A job read as JSON (to_jsonb): its times as Dates, as a plain read gives them. */
function jobFromJson(json: Record<string, unknown>): JobRow {
  return {
    ...(json as JobRow),
    not_before: dateOrNull(json.not_before),
    not_after: dateOrNull(json.not_after),
    next_attempt_at: dateOrNull(json.next_attempt_at),
    finished_at: dateOrNull(json.finished_at),
    created_at: dateOrNull(json.created_at)!,
    updated_at: dateOrNull(json.updated_at)!,
  };
}

type Paging = { cursor: KeysetPosition | null | undefined; limit: number };
type KeysetList<Row> = { rows: Row[]; pagination: CursorPage<unknown>['pagination'] };

/**
 * One page of `base()` newest first by (`<alias>.created_at`, `<alias>.<key>`), after the cursor, with
 * the exact total: the keyset paging of jobs, campaigns and the do-not-call list.
 */
async function newestFirst<Row extends Record<string, unknown>>(
  db: Db | Knex.Transaction,
  base: () => Knex.QueryBuilder,
  alias: string,
  key: { column: string; cast: 'uuid' | 'text' },
  paging: Paging,
): Promise<KeysetList<Row>> {
  const at = `${alias}.created_at`;
  const id = `${alias}.${key.column}`;
  const page = base()
    .select(
      `${alias}.*`,
      db.raw(`to_char(?? AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at`, [at]),
    )
    .orderBy([
      { column: at, order: 'desc' },
      { column: id, order: 'desc' },
    ]);
  if (paging.cursor)
    page.whereRaw(`(??, ??) < (?::timestamptz, ?::${key.cast})`, [at, id, paging.cursor.at, paging.cursor.id]);
  const [rows, count] = await Promise.all([
    page.limit(paging.limit + 1) as Promise<(Row & { position_at: string })[]>,
    base().count({ total: '*' }).first(),
  ]);
  const data = rows.slice(0, paging.limit);
  const last = data[data.length - 1];
  const next = rows.length > paging.limit && last ? { at: last.position_at, id: String(last[key.column]) } : undefined;
  // The position is the cursor's, not a field of the row.
  for (const row of data) delete (row as { position_at?: string }).position_at;
  return {
    rows: data,
    pagination: cursorPagination(
      { cursor: paging.cursor ?? null, limit: paging.limit },
      Number((count as { total?: string } | undefined)?.total ?? 0),
      next,
    ),
  };
}

/**
 * The claim's statements, prepared (parsed and planned once per connection): every dialer polls
 * with them (`npm run bench -- outbound`). What each does is said at its method.
 */
const peekSql = (label: string, organization: string) =>
  preparedSql(
    label,
    `WITH peek AS MATERIALIZED (
       SELECT j.id, j.agent_id, j.next_attempt_at
         FROM outbound_jobs j
         LEFT JOIN outbound_campaigns c ON c.id = j.campaign_id
        WHERE ${organization} AND j.status = 'scheduled' AND j.next_attempt_at <= :now
          AND (j.campaign_id IS NULL OR c.status = 'active')
        ORDER BY j.next_attempt_at, j.id
        LIMIT :limit
     ), locked AS MATERIALIZED (
       SELECT count(pg_advisory_xact_lock(hashtextextended('outbound:' || a.agent_id::text, 0))) AS n
         FROM (SELECT DISTINCT agent_id FROM peek ORDER BY agent_id) a
     )
     SELECT peek.id, peek.agent_id FROM peek, locked ORDER BY peek.next_attempt_at, peek.id`,
  );
const PEEK_ONE_SQL = peekSql('outbound_peek_one', 'j.organization_id = :organization::uuid');
const PEEK_ANY_SQL = peekSql('outbound_peek_any', 'j.organization_id = ANY(:organizations::uuid[])');

/** The columns of a job (JobRow), named: a prepared statement never selects `*`. */
const JOB_COLUMNS = [
  'id',
  'organization_id',
  ...JOB_SETTING_COLUMNS,
  'attempt_count',
  'failure_reason',
  'finished_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof JobRow)[];

// From the ids (unnest) to each row by its key: a filter on the due index here would read every due job.
// The conditions on the job are one `IS TRUE`, which no index serves: the planner chose the due index
// whenever the table's statistics predated its due jobs (before autoanalyze came by, a timing that
// differed between runs of `npm run bench -- outbound`).
const DUE_JOBS_SQL = preparedSql(
  'outbound_due_jobs',
  `WITH running AS (
     SELECT agent_id, campaign_id, count(*)::int AS n FROM outbound_jobs
      WHERE agent_id = ANY(:agents::uuid[]) AND status = 'in_progress'
      GROUP BY agent_id, campaign_id
   ), per_agent AS (
     SELECT agent_id, sum(n)::int AS n FROM running GROUP BY agent_id
   ), per_campaign AS (
     SELECT campaign_id, sum(n)::int AS n FROM running WHERE campaign_id IS NOT NULL GROUP BY campaign_id
   )
   SELECT ${JOB_COLUMNS.map((c) => `j."${c}"`).join(', ')},
          a.phone_number AS agent_phone_number, a.schedule AS agent_schedule,
          a.bundesland AS agent_bundesland, a.vacation_mode AS agent_vacation_mode,
          a.vacation_end AS agent_vacation_end, c.max_concurrent AS campaign_max_concurrent,
          coalesce(pa.n, 0) AS agent_running, coalesce(pc.n, 0) AS campaign_running,
          EXISTS (SELECT 1 FROM do_not_call d
                   WHERE d.organization_id = j.organization_id AND d.phone_number = j.to_number) AS listed
     FROM unnest(:ids::uuid[]) AS p(id)
     JOIN outbound_jobs j ON j.id = p.id
     JOIN agents a ON a.id = j.agent_id
     LEFT JOIN outbound_campaigns c ON c.id = j.campaign_id
     LEFT JOIN per_agent pa ON pa.agent_id = j.agent_id
     LEFT JOIN per_campaign pc ON pc.campaign_id = j.campaign_id
    WHERE (j.organization_id = ANY(:organizations::uuid[]) AND j.status = 'scheduled' AND j.next_attempt_at <= :now) IS TRUE
      AND (j.campaign_id IS NULL OR c.status = 'active')
      AND coalesce(pa.n, 0) < :max
      AND (j.campaign_id IS NULL OR coalesce(pc.n, 0) < c.max_concurrent)
    ORDER BY j.next_attempt_at, j.id
      FOR UPDATE OF j SKIP LOCKED`,
);

/** What a claim ranks due jobs by to keep `max_concurrent` and the per-agent limit (withRoom). */
const ROOM_COLUMNS = [
  'id',
  'agent_id',
  'campaign_id',
  'next_attempt_at',
  'campaign_max_concurrent',
  'agent_running',
  'campaign_running',
] as const;

/**
 * CTEs ending in `with_room`: of the due jobs `source` (ROOM_COLUMNS, `*_running` the jobs in
 * progress when counted), those a claim starts, at most `:max`, oldest due first. The claim's loop
 * did the same one job at a time: a job whose campaign is at its `max_concurrent` is skipped and
 * takes no room of its agent, and one whose agent is at `:per_agent` is skipped (its campaign's
 * later jobs are then skipped too, as the agent's count only grows).
 */
function withRoom(source: string): string {
  const columns = (alias: string) => ROOM_COLUMNS.map((c) => `${alias}.${c}`).join(', ');
  return `in_campaign AS (
     SELECT ${columns('s')},
            row_number() OVER (PARTITION BY s.campaign_id ORDER BY s.next_attempt_at, s.id) AS campaign_rank
       FROM ${source} s
   ), campaign_room AS (
     SELECT ${columns('s')},
            row_number() OVER (PARTITION BY s.agent_id ORDER BY s.next_attempt_at, s.id) AS agent_rank
       FROM in_campaign s
      WHERE s.campaign_max_concurrent IS NULL OR s.campaign_running + s.campaign_rank <= s.campaign_max_concurrent
   ), with_room AS MATERIALIZED (
     SELECT s.id, s.next_attempt_at FROM campaign_room s WHERE s.agent_running + s.agent_rank <= :per_agent
      ORDER BY s.next_attempt_at, s.id LIMIT :max
   )`;
}

/** Jobs in progress of the agents of `agents` (a subquery or an array), per agent and per campaign. */
const RUNNING_TOTALS = `per_agent AS (
     SELECT agent_id, sum(n)::int AS n FROM running GROUP BY agent_id
   ), per_campaign AS (
     SELECT campaign_id, sum(n)::int AS n FROM running WHERE campaign_id IS NOT NULL GROUP BY campaign_id
   )`;

/**
 * A claim's first statement, which locks nothing: the first due jobs (as peekSql) that have room by
 * the jobs in progress at this moment, at most `:max`, with what the claim checks them against (as
 * DUE_JOBS_SQL). The claim's audit row is written here when none is found (CLAIMABLE_NONE), else by
 * TAKE_SQL.
 */
const claimableSql = (label: string, organization: string) =>
  preparedSql(
    label,
    `WITH peek AS MATERIALIZED (
       SELECT j.id, j.agent_id FROM outbound_jobs j
         LEFT JOIN outbound_campaigns c ON c.id = j.campaign_id
        WHERE ${organization} AND j.status = 'scheduled' AND j.next_attempt_at <= :now
          AND (j.campaign_id IS NULL OR c.status = 'active')
        ORDER BY j.next_attempt_at, j.id
        LIMIT :limit
     ), running AS (
       SELECT agent_id, campaign_id, count(*)::int AS n FROM outbound_jobs
        WHERE agent_id IN (SELECT agent_id FROM peek) AND status = 'in_progress'
        GROUP BY agent_id, campaign_id
     ), ${RUNNING_TOTALS}, due AS (
       SELECT j.id, j.agent_id, j.campaign_id, j.next_attempt_at, c.max_concurrent AS campaign_max_concurrent,
              coalesce(pa.n, 0) AS agent_running, coalesce(pc.n, 0) AS campaign_running
         FROM peek JOIN outbound_jobs j ON j.id = peek.id
         LEFT JOIN outbound_campaigns c ON c.id = j.campaign_id
         LEFT JOIN per_agent pa ON pa.agent_id = j.agent_id
         LEFT JOIN per_campaign pc ON pc.campaign_id = j.campaign_id
     ), ${withRoom('due')} ${OTHERS_AFTER_CTES}
     SELECT ${JOB_COLUMNS.map((c) => `j."${c}"`).join(', ')},
            a.phone_number AS agent_phone_number, a.schedule AS agent_schedule,
            a.bundesland AS agent_bundesland, a.vacation_mode AS agent_vacation_mode,
            a.vacation_end AS agent_vacation_end, due.campaign_max_concurrent,
            due.agent_running, due.campaign_running,
            EXISTS (SELECT 1 FROM do_not_call d
                     WHERE d.organization_id = j.organization_id AND d.phone_number = j.to_number) AS listed
       FROM with_room w
       JOIN due ON due.id = w.id
       JOIN outbound_jobs j ON j.id = w.id
       JOIN agents a ON a.id = j.agent_id
      ORDER BY w.next_attempt_at, w.id`,
  );
const CLAIMABLE_ONE_SQL = claimableSql('outbound_claimable_one', 'j.organization_id = :organization::uuid');
const CLAIMABLE_ANY_SQL = claimableSql('outbound_claimable_any', 'j.organization_id = ANY(:organizations::uuid[])');
/** The claim found nothing to start: its audit row goes with claimableSql. */
export const CLAIMABLE_NONE = 'NOT EXISTS (SELECT 1 FROM with_room)';
const AFTER = { afterCtes: true };

/**
 * A claim's second statement, without a transaction: the jobs `:ids` (found by claimableSql and
 * checked against their windows and the do-not-call list) that are still due start, as far as
 * their agent and campaign have room, each with its attempt, and their numbers' consent records are
 * kept (as START_ATTEMPTS_SQL). The agents' dispatch locks are taken first (sorted, as
 * peekAndLockAgents takes them) and held to the statement's end, so claims of one agent take turns;
 * the jobs in progress are then counted by outbound_running_jobs on a snapshot taken after the
 * locks, which sees every claim that held them before. Rows another claimer holds are skipped and
 * rows it started no longer match (FOR UPDATE re-reads a row changed since the statement began), so
 * no two claimers ever get the same job. Each job is looked up by its key (`IS TRUE`, as in
 * DUE_JOBS_SQL).
 */
const TAKE_SQL = preparedSql(
  'outbound_take',
  `WITH locked AS MATERIALIZED (
     SELECT count(pg_advisory_xact_lock(hashtextextended('outbound:' || a.agent_id::text, 0))) AS n
       FROM (SELECT DISTINCT agent_id FROM unnest(:agents::uuid[]) AS a(agent_id) ORDER BY agent_id) a
   ), running AS MATERIALIZED (
     SELECT r.agent_id, r.campaign_id, r.n FROM outbound_running_jobs(:agents::uuid[], (SELECT n FROM locked)) r
   ), ${RUNNING_TOTALS}, due AS MATERIALIZED (
     SELECT j.id, j.agent_id, j.campaign_id, j.next_attempt_at, c.max_concurrent AS campaign_max_concurrent,
            coalesce(pa.n, 0) AS agent_running, coalesce(pc.n, 0) AS campaign_running
       FROM unnest(:ids::uuid[]) AS p(id)
       JOIN outbound_jobs j ON j.id = p.id
       LEFT JOIN outbound_campaigns c ON c.id = j.campaign_id
       LEFT JOIN per_agent pa ON pa.agent_id = j.agent_id
       LEFT JOIN per_campaign pc ON pc.campaign_id = j.campaign_id
      WHERE (SELECT n FROM locked) >= 0
        AND (j.organization_id = ANY(:organizations::uuid[]) AND j.status = 'scheduled' AND j.next_attempt_at <= :now) IS TRUE
        AND (j.campaign_id IS NULL OR c.status = 'active')
        FOR UPDATE OF j SKIP LOCKED
   ), ${withRoom('due')}, started AS (
     UPDATE outbound_jobs j SET status = 'in_progress', attempt_count = j.attempt_count + 1, updated_at = :now
       FROM with_room w WHERE j.id = w.id
     RETURNING j.id, j.organization_id, j.to_number, j.attempt_count
   ), touched AS (
     UPDATE outbound_consents c SET last_call_at = :now, keep_until = greatest(c.keep_until, :keep::timestamptz)
       FROM (SELECT DISTINCT organization_id, to_number FROM started) n
      WHERE c.organization_id = n.organization_id AND c.phone_number = n.to_number
   ), attempts AS (
     INSERT INTO outbound_attempts (organization_id, job_id, number, claimed_at, lease_expires_at)
     SELECT organization_id, id, attempt_count, :now, :lease FROM started
     RETURNING id, job_id, number
   )
   SELECT id, job_id, number FROM attempts`,
);

const START_ATTEMPTS_SQL = preparedSql(
  'outbound_start_attempts',
  `WITH p AS MATERIALIZED (
     SELECT job_id, organization_id, to_number, number
       FROM unnest(:jobs::uuid[], :organizations::uuid[], :numbers::text[], :attempts::int[])
                     AS p(job_id, organization_id, to_number, number)
   ), started AS (
     UPDATE outbound_jobs j SET status = 'in_progress', attempt_count = j.attempt_count + 1, updated_at = :now
       FROM p WHERE j.id = p.job_id AND j.organization_id = p.organization_id
   ), touched AS (
     UPDATE outbound_consents c SET last_call_at = :now, keep_until = greatest(c.keep_until, :keep::timestamptz)
       FROM (SELECT DISTINCT organization_id, to_number FROM p) n
      WHERE c.organization_id = n.organization_id AND c.phone_number = n.to_number
   )
   INSERT INTO outbound_attempts (organization_id, job_id, number, claimed_at, lease_expires_at)
   SELECT organization_id, job_id, number, :now, :lease FROM p
   RETURNING id, job_id`,
);

const FIRST_LEASE_END_SQL = preparedSql(
  'outbound_first_lease_end',
  `SELECT min(lease_expires_at) AS first FROM outbound_attempts
    WHERE organization_id = ANY(:organizations::uuid[]) AND outcome IS NULL`,
);

/**
 * A dialer's result for an attempt still open within its lease, as data-modifying CTEs with `$n`
 * values (`finishValues`): the attempt finished (`a`) and, when answered, its job completed while it
 * is still in progress (`done`). A dialer reports every job it got, so this runs once per job
 * (`npm run bench -- outbound`), always prepared. The job is looked up by its key through the
 * attempt's values (InitPlans); `IS NOT DISTINCT FROM` (the same as `=` for the non-null status)
 * keeps the planner from walking the partial index of the jobs in progress (outbound_jobs_running)
 * instead, which read every running job for each result.
 */
const FINISH_CTES = `a AS (
     UPDATE outbound_attempts SET outcome = $1, call_id = $2, lease_expired = false, finished_at = $3
      WHERE id = $4 AND organization_id = ANY($5::uuid[]) AND outcome IS NULL AND lease_expires_at > $3
      RETURNING *
   ), done AS (
     UPDATE outbound_jobs j SET status = 'completed', failure_reason = NULL, next_attempt_at = NULL,
            finished_at = $3, updated_at = $3
      WHERE j.id = (SELECT job_id FROM a WHERE outcome = 'answered')
        AND j.organization_id = (SELECT organization_id FROM a)
        AND j.status IS NOT DISTINCT FROM 'in_progress'
      RETURNING j.*
   )`;

/** The job's other attempts, read in the same statement as `a` (which it sees before `a`'s change). */
const EARLIER_ATTEMPTS = `SELECT ${ATTEMPT_COLUMNS.map((c) => `o.${c}`).join(', ')} FROM outbound_attempts o
    WHERE o.organization_id = (SELECT organization_id FROM a) AND o.job_id = (SELECT job_id FROM a)
      AND o.id <> (SELECT id FROM a)`;

const FINISH_SELECT = `SELECT to_jsonb(a) AS attempt, (SELECT to_jsonb(done) FROM done) AS completed,
          (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.number), '[]'::jsonb) FROM (${EARLIER_ATTEMPTS}) e) AS earlier
     FROM a`;

/**
 * For an outcome other than answered: the job of the attempt `a` finished, locked (after the
 * attempt, as on every other path), with the fields of its agent that its calling window needs.
 */
const LOCKED_JOB = `locked_job AS (
     SELECT ${JOB_COLUMNS.map((c) => `j."${c}"`).join(', ')}, g.schedule AS agent_schedule,
            g.bundesland AS agent_bundesland, g.vacation_mode AS agent_vacation_mode, g.vacation_end AS agent_vacation_end
       FROM outbound_jobs j JOIN agents g ON g.id = j.agent_id
      WHERE j.id = (SELECT job_id FROM a) AND j.organization_id = (SELECT organization_id FROM a)
        FOR UPDATE OF j
   )`;
const FINISH_LOCK_SELECT = FINISH_SELECT.replace(
  /\s+FROM a$/,
  `, (SELECT to_jsonb(locked_job) FROM locked_job) AS job FROM a`,
);

/** `outbound_call.completed` of the job `done` completed, its attempts `a` and the earlier ones. */
const COMPLETED_EVENT = `SELECT done.organization_id, done.agent_id, 'outbound_call.completed' AS type,
          jsonb_build_object('event', 'outbound_call.completed', 'outbound_call', ${outboundCallJson(
            'done',
            `(SELECT ${ATTEMPT_COLUMNS.join(', ')} FROM a UNION ALL ${EARLIER_ATTEMPTS})`,
          )}) AS payload
     FROM done`;

/** What finishing an open attempt found: the attempt, its job when answered completed it, its other attempts. */
export type FinishedOpenAttempt = { attempt: AttemptRow; completed: JobRow | null; earlier: AttemptRow[] };

/** A job as finishOpenAttempt locks it, with its agent's window fields. */
export type LockedJob = JobRow & {
  agent_schedule: unknown;
  agent_bundesland: string;
  agent_vacation_mode: boolean | null;
  agent_vacation_end: Date | string | null;
};

function finishValues(
  organizationIds: string[],
  id: string,
  changes: { outcome: Outcome; call_id: string | null; finished_at: Date },
): unknown[] {
  return [changes.outcome, changes.call_id, changes.finished_at, id, organizationIds];
}

/**
 * The row of FINISH_SELECT (none when the attempt is not of these organizations, already finished
 * or past its lease).
 */
export function readFinished(rows: unknown[]): FinishedOpenAttempt | undefined {
  const row = rows[0] as
    | {
        attempt: Record<string, unknown>;
        completed: Record<string, unknown> | null;
        earlier: Record<string, unknown>[];
      }
    | undefined;
  if (!row) return undefined;
  return {
    attempt: attemptFromJson(row.attempt),
    completed: row.completed === null ? null : jobFromJson(row.completed),
    earlier: row.earlier.map(attemptFromJson),
  };
}

/**
 * finishOpenAttempt for `answered`, with the `outbound_call.completed` event of the job it completes
 * (none when the job is no longer in progress), for `EventRecorder.recordFrom`; its rows are read
 * with `readFinished`.
 */
export function answeredChange(
  organizationIds: string[],
  id: string,
  changes: { call_id: string | null; finished_at: Date },
): ChangeWithEvent & { applied: string } {
  return {
    /** SQL over the statement: the attempt was open, and is finished. */
    applied: 'EXISTS (SELECT 1 FROM a)',
    ctes: FINISH_CTES,
    event: COMPLETED_EVENT,
    select: FINISH_SELECT,
    values: finishValues(organizationIds, id, { outcome: 'answered', ...changes }),
  };
}

export class OutboundRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): OutboundRepository {
    return new OutboundRepository(trx);
  }

  /** The rows of one agent's jobs or campaigns, scoped by its organization too. */
  private ofAgent(table: 'outbound_jobs' | 'outbound_campaigns', agent: AgentRef) {
    return this.db(table).where({ agent_id: agent.id, organization_id: agent.organization_id });
  }

  async insertJobs(jobs: JobFields[]): Promise<JobRow[]> {
    if (jobs.length === 0) return [];
    const rows: JobRow[] = [];
    // Bounded statements: 65535 bindings at most per statement.
    for (let i = 0; i < jobs.length; i += 2000) {
      const chunk = jobs.slice(i, i + 2000).map((j) => ({
        ...j,
        window: JSON.stringify(j.window),
        variables: JSON.stringify(j.variables),
        consent: j.consent === null ? null : JSON.stringify(j.consent),
      }));
      rows.push(...((await this.db('outbound_jobs').insert(chunk).returning('*')) as JobRow[]));
    }
    return rows;
  }

  findJob(agent: AgentRef, id: string): Promise<JobRow | undefined> {
    return this.ofAgent('outbound_jobs', agent).where({ id }).first() as Promise<JobRow | undefined>;
  }

  findByExternalId(agent: AgentRef, externalId: string): Promise<JobRow | undefined> {
    return this.ofAgent('outbound_jobs', agent).where({ external_id: externalId }).first() as Promise<
      JobRow | undefined
    >;
  }

  /** Call it on `with(trx)`. */
  lockJob(organizationId: string, id: string): Promise<JobRow | undefined> {
    return this.jobOf(organizationId, id).forUpdate().first() as Promise<JobRow | undefined>;
  }

  findJobOf(organizationId: string, id: string): Promise<JobRow | undefined> {
    return this.jobOf(organizationId, id).first() as Promise<JobRow | undefined>;
  }

  private jobOf(organizationId: string, id: string): Knex.QueryBuilder {
    return this.db('outbound_jobs').where({ id, organization_id: organizationId });
  }

  async updateJob(organizationId: string, id: string, changes: Partial<JobRow>): Promise<JobRow> {
    const [row] = (await this.db('outbound_jobs')
      .where({ id, organization_id: organizationId })
      .update(changes)
      .returning('*')) as JobRow[];
    return row!;
  }

  async attemptsOf(organizationId: string, jobIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const byJob = new Map<string, AttemptRow[]>(jobIds.map((id) => [id, []]));
    if (jobIds.length === 0) return byJob;
    const rows = (await this.db('outbound_attempts')
      .where('organization_id', organizationId)
      .whereIn('job_id', jobIds)
      .orderBy(['job_id', 'number'])) as AttemptRow[];
    for (const row of rows) byJob.get(row.job_id)?.push(row);
    return byJob;
  }

  async listJobs(
    agent: AgentRef,
    filters: { status?: JobStatus; campaign_id?: string },
    paging: { cursor: KeysetPosition | null | undefined; limit: number },
  ): Promise<{ rows: JobRow[]; pagination: CursorPage<unknown>['pagination'] }> {
    const base = () => {
      const q = this.db('outbound_jobs as j').where({
        'j.agent_id': agent.id,
        'j.organization_id': agent.organization_id,
      });
      if (filters.status) q.where('j.status', filters.status);
      if (filters.campaign_id) q.where('j.campaign_id', filters.campaign_id);
      return q;
    };
    return newestFirst<JobRow>(this.db, base, 'j', { column: 'id', cast: 'uuid' }, paging);
  }

  // Do-not-call list

  async listedNumbers(organizationId: string, numbers: string[]): Promise<Set<string>> {
    if (numbers.length === 0) return new Set();
    const rows = (await this.db('do_not_call')
      .where('organization_id', organizationId)
      .whereIn('phone_number', [...new Set(numbers)])
      .select('phone_number')) as { phone_number: string }[];
    return new Set(rows.map((r) => r.phone_number));
  }

  findDoNotCall(organizationId: string, phoneNumber: string): Promise<DoNotCallRow | undefined> {
    return this.db('do_not_call')
      .where({ organization_id: organizationId, phone_number: phoneNumber })
      .first() as Promise<DoNotCallRow | undefined>;
  }

  /** Adds the number unless it is listed already; returns the entry as stored. */
  async addDoNotCall(entry: DoNotCallRow): Promise<{ row: DoNotCallRow; created: boolean }> {
    const [inserted] = (await this.db('do_not_call')
      .insert(entry)
      .onConflict(['organization_id', 'phone_number'])
      .ignore()
      .returning('*')) as DoNotCallRow[];
    if (inserted) return { row: inserted, created: true };
    return { row: (await this.findDoNotCall(entry.organization_id, entry.phone_number))!, created: false };
  }

  async deleteDoNotCall(organizationId: string, phoneNumber: string): Promise<boolean> {
    return (
      (await this.db('do_not_call').where({ organization_id: organizationId, phone_number: phoneNumber }).delete()) > 0
    );
  }

  async listDoNotCall(
    organizationId: string,
    phoneNumber: string | undefined,
    paging: { cursor: KeysetPosition | null | undefined; limit: number },
  ): Promise<{ rows: DoNotCallRow[]; pagination: CursorPage<unknown>['pagination'] }> {
    const base = () => {
      const q = this.db('do_not_call as d').where('d.organization_id', organizationId);
      if (phoneNumber !== undefined) q.where('d.phone_number', phoneNumber);
      return q;
    };
    // The keyset's id part is the number: unique within the organization, compared as text.
    return newestFirst<DoNotCallRow>(this.db, base, 'd', { column: 'phone_number', cast: 'text' }, paging);
  }

  /** Jobs of the organization for `phoneNumber` that may still be handed out become `blocked`. */
  async blockOpenJobs(organizationId: string, phoneNumber: string, now: Date): Promise<number> {
    return this.db('outbound_jobs')
      .where({ organization_id: organizationId, to_number: phoneNumber, status: 'scheduled' })
      .update({ status: 'blocked', next_attempt_at: null, finished_at: now, updated_at: now });
  }

  // Consent records

  async insertConsents(
    rows: {
      organization_id: string;
      agent_id: string;
      job_id: string;
      phone_number: string;
      basis: string;
      obtained_at: string;
      source: string;
      keep_until: Date;
      created_at: Date;
    }[],
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += 5000) await this.db('outbound_consents').insert(rows.slice(i, i + 5000));
  }

  /** Deletes up to `limit` consent records whose keep_until has passed; returns how many. */
  async deleteExpiredConsents(now: Date, limit: number): Promise<number> {
    const expired = this.db('outbound_consents')
      .where('keep_until', '<', now)
      .select('id')
      .orderBy('keep_until')
      .limit(limit)
      .forUpdate()
      .skipLocked();
    return this.db('outbound_consents').whereIn('id', expired).delete();
  }

  // Dispatch

  /**
   * The first due jobs (of active campaigns or of none, oldest due first), read without locking
   * them, and their agents' dispatch locks, taken in the same statement (sorted, so two claimers
   * never wait on each other in a cycle) and held until the transaction ends: claims of one agent
   * take turns, and the counts a later statement reads under them are exact. With one
   * organization the read walks the partial index outbound_jobs_due_org in order and stops at
   * `limit`, however many jobs are due. `others` (the claim's audit row) are written in the same
   * statement. Call it on `with(trx)`.
   */
  async peekAndLockAgents(
    organizationIds: string[],
    now: Date,
    limit: number,
    others: readonly Statement[] = [],
  ): Promise<{ id: string; agent_id: string }[]> {
    // One organization (the usual key) as an equality: an index scan over `= ANY(array)` yields no order in PostgreSQL 15.
    const { sql, values } =
      organizationIds.length === 1
        ? withStatements(PEEK_ONE_SQL, { organization: organizationIds[0]!, now, limit }, others)
        : withStatements(PEEK_ANY_SQL, { organizations: organizationIds, now, limit }, others);
    const { rows } = (await runPrepared(this.db, sql, values)) as { rows: { id: string; agent_id: string }[] };
    return rows;
  }

  /**
   * Of the peeked jobs `ids`, those still due whose agent (under `maxPerAgent`) and campaign (under
   * its `max_concurrent`) have room by the jobs in progress of `agentIds`, oldest due first, locked
   * for this transaction, with those counts and whether the number is on the do-not-call list.
   * Rows another claimer holds are skipped (FOR UPDATE SKIP LOCKED) and rows it took since the peek
   * no longer match, so no two claimers ever get the same job; jobs without room are not locked.
   * Looked up by id, so the lock is taken in a few index lookups however many jobs are due (the
   * ordering of all due jobs happened in the peek). Call it on `with(trx)`, after
   * peekAndLockAgents: the counts are exact under the agents' locks.
   */
  async dueJobs(
    organizationIds: string[],
    agentIds: string[],
    ids: string[],
    now: Date,
    maxPerAgent: number,
  ): Promise<DueJob[]> {
    if (ids.length === 0) return [];
    const { rows } = (await runPrepared(this.db, DUE_JOBS_SQL, {
      agents: agentIds,
      ids,
      organizations: organizationIds,
      now,
      max: maxPerAgent,
    })) as { rows: DueJob[] };
    return rows;
  }

  /**
   * The picked jobs start, in one statement: each gets its attempt (number `attempt_count + 1`,
   * with its lease), becomes in_progress, and every consent record of its number is kept five
   * years from this call (`keepUntil`). Answers the attempts. Call it on `with(trx)` with the
   * jobs locked by dueJobs.
   */
  async startAttempts(
    jobs: { id: string; organization_id: string; to_number: string; attempt_count: number }[],
    now: Date,
    leaseExpiresAt: Date,
    keepUntil: Date,
  ): Promise<{ id: string; job_id: string }[]> {
    if (jobs.length === 0) return [];
    const { rows } = (await runPrepared(this.db, START_ATTEMPTS_SQL, {
      jobs: jobs.map((j) => j.id),
      organizations: jobs.map((j) => j.organization_id),
      numbers: jobs.map((j) => j.to_number),
      attempts: jobs.map((j) => j.attempt_count + 1),
      now,
      keep: keepUntil,
      lease: leaseExpiresAt,
    })) as { rows: { id: string; job_id: string }[] };
    return rows;
  }

  /**
   * The due jobs a claim may start now (claimableSql), at most `max`, read without locking; when
   * there are none the claim's audit row (`audit`, written only then) is written with the read.
   */
  async claimable(
    organizationIds: string[],
    now: Date,
    limits: { peek: number; max: number; perAgent: number },
    audit: readonly Statement[],
  ): Promise<DueJob[]> {
    const bindings = { now, limit: limits.peek, max: limits.max, per_agent: limits.perAgent };
    const { sql, values } =
      organizationIds.length === 1
        ? withStatements(CLAIMABLE_ONE_SQL, { ...bindings, organization: organizationIds[0]! }, audit, AFTER)
        : withStatements(CLAIMABLE_ANY_SQL, { ...bindings, organizations: organizationIds }, audit, AFTER);
    const { rows } = (await runPrepared(this.db, sql, values)) as { rows: DueJob[] };
    return rows;
  }

  /**
   * The claimable jobs `jobs` start (TAKE_SQL) as far as they are still due and their agent and
   * campaign have room, with the claim's audit row (`audit`), in one statement: answers the
   * attempts.
   */
  async take(
    organizationIds: string[],
    jobs: { id: string; agent_id: string }[],
    claim: { now: Date; leaseExpiresAt: Date; keepUntil: Date; max: number; perAgent: number },
    audit: readonly Statement[],
  ): Promise<{ id: string; job_id: string; number: number }[]> {
    const { sql, values } = withStatements(
      TAKE_SQL,
      {
        agents: [...new Set(jobs.map((j) => j.agent_id))],
        ids: jobs.map((j) => j.id),
        organizations: organizationIds,
        now: claim.now,
        lease: claim.leaseExpiresAt,
        keep: claim.keepUntil,
        max: claim.max,
        per_agent: claim.perAgent,
      },
      audit,
    );
    const { rows } = (await runPrepared(this.db, sql, values)) as {
      rows: { id: string; job_id: string; number: number }[];
    };
    return rows;
  }

  /** When the first open attempt's lease runs (or ran) out; null without open attempts (read without locking). */
  async firstLeaseEnd(organizationIds: string[]): Promise<Date | null> {
    const { rows } = (await runPrepared(this.db, FIRST_LEASE_END_SQL, { organizations: organizationIds })) as {
      rows: { first: Date | null }[];
    };
    return rows[0]?.first ?? null;
  }

  /** Open attempts whose lease ran out, locked (others' skipped). Call it on `with(trx)`. */
  expiredAttempts(organizationIds: string[], now: Date, limit: number): Promise<AttemptRow[]> {
    return this.db('outbound_attempts')
      .whereIn('organization_id', organizationIds)
      .whereNull('outcome')
      .where('lease_expires_at', '<=', now)
      .orderBy('lease_expires_at')
      .limit(limit)
      .forUpdate()
      .skipLocked() as Promise<AttemptRow[]>;
  }

  /** Call it on `with(trx)`. */
  lockAttempt(organizationIds: string[], id: string): Promise<AttemptRow | undefined> {
    return this.db('outbound_attempts')
      .whereIn('organization_id', organizationIds)
      .where('id', id)
      .forUpdate()
      .first() as Promise<AttemptRow | undefined>;
  }

  async finishAttempt(
    id: string,
    changes: { outcome: Outcome; call_id: string | null; lease_expired: boolean; finished_at: Date },
  ): Promise<AttemptRow> {
    const [row] = (await this.db('outbound_attempts').where('id', id).update(changes).returning('*')) as AttemptRow[];
    return row!;
  }

  /**
   * A dialer's result for an attempt still open within its lease, in one statement: the attempt is
   * finished and the job's other attempts read (`completed` null: the caller locks the job and
   * settles it; `answered` goes through answeredChange, which completes the job in the same
   * statement). Undefined when the attempt is not of these organizations, already finished or past
   * its lease: the caller then looks at it as it is. The attempt's row is locked before its job's,
   * as on every other path. Call it on `with(trx)`.
   */
  async finishOpenAttempt(
    organizationIds: string[],
    id: string,
    changes: { outcome: Outcome; call_id: string | null; finished_at: Date },
    others: readonly Statement[] = [],
  ): Promise<(FinishedOpenAttempt & { job: LockedJob }) | undefined> {
    const values = finishValues(organizationIds, id, changes);
    const parts = [FINISH_CTES, LOCKED_JOB, ...namedCtes(others, values, (i) => `other_${i}`)];
    const { rows } = await runStatementPrepared(this.db, 'outbound_finish_open_attempt', {
      text: `WITH ${parts.join(', ')} ${FINISH_LOCK_SELECT}`,
      values,
    });
    const finished = readFinished(rows);
    if (!finished) return undefined;
    return { ...finished, job: jobFromJson((rows[0] as { job: Record<string, unknown> }).job) as LockedJob };
  }

  /** The agent fields the calling window needs. */
  windowAgent(agent: AgentRef) {
    return this.db('agents')
      .where({ id: agent.id, organization_id: agent.organization_id })
      .first('schedule', 'bundesland', 'vacation_mode', 'vacation_end', 'phone_number') as Promise<
      | {
          schedule: unknown;
          bundesland: string;
          vacation_mode: boolean;
          vacation_end: Date | null;
          phone_number: string;
        }
      | undefined
    >;
  }

  async contactExists(agent: AgentRef, contactIds: string[]): Promise<Set<string>> {
    if (contactIds.length === 0) return new Set();
    const rows = (await this.db('contacts')
      .where({ agent_id: agent.id })
      .whereIn('id', [...new Set(contactIds)])
      .select('id')) as { id: string }[];
    return new Set(rows.map((r) => r.id));
  }

  // Campaigns

  async insertCampaign(fields: Omit<CampaignRow, 'id'>): Promise<CampaignRow> {
    const [row] = (await this.db('outbound_campaigns')
      .insert({ ...fields, window: JSON.stringify(fields.window), variables: JSON.stringify(fields.variables) })
      .returning('*')) as CampaignRow[];
    return row!;
  }

  findCampaign(agent: AgentRef, id: string): Promise<CampaignRow | undefined> {
    return this.ofAgent('outbound_campaigns', agent).where({ id }).first() as Promise<CampaignRow | undefined>;
  }

  /** Call it on `with(trx)`. */
  lockCampaign(agent: AgentRef, id: string): Promise<CampaignRow | undefined> {
    return this.ofAgent('outbound_campaigns', agent).where({ id }).forUpdate().first() as Promise<
      CampaignRow | undefined
    >;
  }

  async updateCampaign(agent: AgentRef, id: string, changes: Partial<CampaignRow>): Promise<CampaignRow> {
    const [row] = (await this.ofAgent('outbound_campaigns', agent)
      .where({ id })
      .update(changes)
      .returning('*')) as CampaignRow[];
    return row!;
  }

  async listCampaigns(
    agent: AgentRef,
    paging: { cursor: KeysetPosition | null | undefined; limit: number },
  ): Promise<{ rows: CampaignRow[]; pagination: CursorPage<unknown>['pagination'] }> {
    const base = () =>
      this.db('outbound_campaigns as j').where({ 'j.agent_id': agent.id, 'j.organization_id': agent.organization_id });
    return newestFirst<CampaignRow>(this.db, base, 'j', { column: 'id', cast: 'uuid' }, paging);
  }

  /** Jobs per status of each campaign, and when the last one became final. */
  async campaignProgress(
    campaignIds: string[],
  ): Promise<Map<string, { counts: Record<string, number>; lastFinishedAt: Date | null }>> {
    const progress = new Map<string, { counts: Record<string, number>; lastFinishedAt: Date | null }>();
    if (campaignIds.length === 0) return progress;
    const rows = (await this.db('outbound_jobs')
      .whereIn('campaign_id', campaignIds)
      .groupBy('campaign_id', 'status')
      .select('campaign_id', 'status', this.db.raw('count(*)::int AS n'), this.db.raw('max(finished_at) AS last'))) as {
      campaign_id: string;
      status: string;
      n: number;
      last: Date | null;
    }[];
    for (const r of rows) {
      const entry = progress.get(r.campaign_id) ?? { counts: {}, lastFinishedAt: null };
      entry.counts[r.status] = r.n;
      if (r.last && (!entry.lastFinishedAt || r.last > entry.lastFinishedAt)) entry.lastFinishedAt = r.last;
      progress.set(r.campaign_id, entry);
    }
    return progress;
  }

  /** Every job of the campaign not yet final becomes cancelled. */
  async cancelCampaignJobs(campaignId: string, organizationId: string, now: Date): Promise<number> {
    return this.db('outbound_jobs')
      .where({ campaign_id: campaignId, organization_id: organizationId })
      .whereIn('status', ['scheduled', 'in_progress'])
      .update({ status: 'cancelled', next_attempt_at: null, finished_at: now, updated_at: now });
  }

  async existingExternalIds(agent: AgentRef, externalIds: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const unique = [...new Set(externalIds)];
    for (let i = 0; i < unique.length; i += 5000) {
      const rows = (await this.db('outbound_jobs')
        .where({ agent_id: agent.id, organization_id: agent.organization_id })
        .whereIn('external_id', unique.slice(i, i + 5000))
        .select('external_id')) as { external_id: string }[];
      for (const r of rows) found.add(r.external_id);
    }
    return found;
  }
}
