import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import { dayPlan, type TimeRange } from './call.rules.js';
import { whereCallFilters } from './call.repository.js';
import type { ListCallsFilters } from './call.schemas.js';
import type { StatsInterval } from './call-stats.schemas.js';

/** Whose calls: one organization, and within it some agents (null = all). */
export type StatsScope = { organizationId: string; agentIds: readonly string[] | null };

/** The scope, filters, whole UTC hours [from, before), interval, grouping and bucket starts of hour counts. */
/** One agent's outcome counters of a field: what `outcomeRows` reads and `outcomeCounts` sums. */
type OutcomeRowsArgs = [
  scope: { organizationId: string; agentId: string },
  field: { name: string; value?: string | number | boolean },
  includeDeleted: boolean,
  hours: Required<TimeRange>,
  interval: StatsInterval,
  starts: readonly Date[],
];

type HourCountsArgs = [
  scope: StatsScope,
  filters: Pick<ListCallsFilters, 'done' | 'include_deleted'>,
  hours: Required<TimeRange>,
  interval: StatsInterval,
  group: StatsGroup,
  starts: readonly Date[],
];

/** What a bucket may be split by. */
export type StatsGroup =
  | { kind: 'none' }
  | { kind: 'done' }
  | { kind: 'employee' }
  | { kind: 'agent' }
  | { kind: 'direction' }
  | { kind: 'variant' }
  | { kind: 'extracted'; name: string };

export type StatsRow = { start: Date; value: string | null; count: number; done: number; duration_total: number };

/** Outcome counters summed per bucket and stored value: all calls and the done ones. */
export type OutcomeRow = {
  start: Date;
  value: string;
  calls: number;
  done_calls: number;
  duration: number;
  done_duration: number;
};

/** The SQL value a call is grouped by, per group kind but `extracted` (a field of extracted_data). */
const GROUP_COLUMNS: Record<Exclude<StatsGroup['kind'], 'extracted'>, string> = {
  none: 'NULL::text',
  done: 'c.done::text',
  employee: 'c.employee_id::text',
  agent: 'c.agent_id::text',
  direction: 'c.direction',
  variant: 'c.variant',
};

function groupSql(group: StatsGroup): [string, string[]] {
  return group.kind === 'extracted' ? ['c.extracted_data ->> ?', [group.name]] : [GROUP_COLUMNS[group.kind], []];
}

/** Counts per time bucket (in a time zone) for the statistics endpoints. */
export class CallStatsRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries through another handle (a read replica). */
  with(db: Db | Knex.Transaction): CallStatsRepository {
    return new CallStatsRepository(db);
  }

  /**
   * The start of every bucket that touches [from, before), in order. Hours step in absolute time
   * (a DST change gives a 23- or 25-bucket day); days, weeks (from Monday) and months step in local
   * time and are turned into instants in `tz`.
   */
  async bucketStarts(interval: StatsInterval, tz: string, range: Required<TimeRange>): Promise<Date[]> {
    const last = new Date(range.before.getTime() - 1);
    const { rows } =
      interval === 'hour'
        ? await this.db.raw(
            `SELECT generate_series(date_trunc('hour', ?::timestamptz, ?), ?::timestamptz, interval '1 hour') AS start`,
            [range.from, tz, last],
          )
        : await this.localSeries(interval, tz, range);
    return (rows as { start: Date }[]).map((r) => r.start);
  }

  /** The start of every day, week or month bucket touching [from, before), as instants (rows `start`). */
  private localSeries(interval: StatsInterval, tz: string, range: Required<TimeRange>): Knex.Raw {
    const last = new Date(range.before.getTime() - 1);
    return this.db.raw(
      `SELECT s AT TIME ZONE ? AS start
         FROM generate_series(date_trunc(?, ?::timestamptz AT TIME ZONE ?), ?::timestamptz AT TIME ZONE ?, ?::interval) s`,
      [tz, interval, range.from, tz, last, tz, `1 ${interval}`],
    );
  }

  /**
   * The bucket of each counter row's UTC hour (`column`; the caller checked that the zone's offsets
   * are whole hours, so an hour lies in one bucket), as `start`. An hour bucket is the hour itself; a
   * day, week or month is its number among the bucket starts (from 1; `readSums` turns it back into
   * the start), found by binary search (width_bucket) in the starts given as a constant array:
   * converting every counter row to the zone (date_trunc in `tz`) took several times the rest of the
   * query for a year of counters, and so did the same search in an array built inside the query
   * (flattened again for every row). The number takes the array once and no date to parse per row.
   */
  private bucketOf(column: string, interval: StatsInterval, starts: readonly Date[]): Knex.Raw {
    if (interval === 'hour') return this.db.raw(`${column} AS start`);
    const array = `{${starts.map((s) => s.toISOString()).join(',')}}`;
    return this.db.raw(`width_bucket(${column}, ?::timestamptz[]) AS start`, [array]);
  }

  /**
   * The same figures from the hourly counters, for whole UTC hours [from, before) (both on an hour):
   * only for the filters and groups the counters keep (done, trash; none, done, agent).
   */
  async countsFromHours(...args: HourCountsArgs): Promise<StatsRow[]> {
    return this.readSums(await this.hourSums(...args), STATS_FIGURES, args[5]);
  }

  /**
   * The hour counters (call_hour_stats) and, for day, week and month buckets, the day counters
   * (call_day_counts) of whole UTC days (`dayAndHourRows`), summed per bucket and group.
   */
  private hourSums(...[scope, filters, hours, interval, group, starts]: HourCountsArgs): Knex.QueryBuilder {
    const owned = (query: Knex.QueryBuilder, alias: string) => {
      query.where(`${alias}.organization_id`, scope.organizationId);
      if (scope.agentIds !== null) query.whereIn(`${alias}.agent_id`, [...scope.agentIds]);
      if (filters.done !== undefined) query.where(`${alias}.done`, filters.done);
      if (!filters.include_deleted) query.where(`${alias}.deleted`, false);
      return query;
    };
    const tables = { days: 'call_day_counts', hours: 'call_hour_stats' };
    const columns = { keys: ['agent_id', 'done'], figures: ['calls', 'duration_total'] };
    const query = this.dayAndHourRows(tables, owned, columns, hours, interval, starts);
    const value = group.kind === 'done' ? 'o.done::text' : group.kind === 'agent' ? 'o.agent_id::text' : 'NULL::text';
    const selected = [this.bucketOf('o.hour', interval, starts), this.db.raw(`${value} AS value`)] as const;
    return this.sumsPerBucket(query.havingRaw('sum(o.calls) > 0'), selected, {
      count: 'sum(o.calls)',
      done: 'coalesce(sum(o.calls) FILTER (WHERE o.done), 0)',
      duration_total: 'sum(o.duration_total)',
    });
  }

  /**
   * One agent's outcome counters of field `name` (only `value`, a JSON value, when given) for whole
   * UTC hours [from, before), trash only with `includeDeleted`, as rows `o` (hour, value and the four
   * figures) whose `hour` lies in the bucket the row counts in (`dayAndHourRows`).
   */
  private outcomeRows(...[scope, field, includeDeleted, hours, interval, starts]: OutcomeRowsArgs): Knex.QueryBuilder {
    const owned = (query: Knex.QueryBuilder, alias: string) => {
      query.where({ [`${alias}.organization_id`]: scope.organizationId, [`${alias}.agent_id`]: scope.agentId });
      query.where(`${alias}.name`, field.name);
      if (field.value !== undefined) query.whereRaw(`${alias}.value = ?::jsonb`, [JSON.stringify(field.value)]);
      if (!includeDeleted) query.where(`${alias}.deleted`, false);
      return query;
    };
    const tables = { days: 'call_outcome_day_stats', hours: 'call_outcome_hour_stats' };
    const columns = { keys: ['value'], figures: FIGURE_COLUMNS };
    return this.dayAndHourRows(tables, owned, columns, hours, interval, starts);
  }

  /**
   * Counter rows `o` (`hour`, the `keys` and the `figures` columns) of whole UTC hours [from,
   * before), each at an hour inside the bucket it counts in, `owned` picking a table's rows (by its
   * alias). Hour buckets read the hour rows. For day, week and month buckets the whole UTC days are
   * day rows at their 12:00 UTC, and hour rows only where that is not enough (`dayHours`): the hours
   * beside the whole days, and the hours of a day that the zone puts in another bucket than the
   * day's 12:00, added at their hour and subtracted at the day's 12:00. Those are found by their UTC
   * hour of the day (in Berlin 22 and 23), so a year reads about 366 day rows and, in a zone with an
   * offset from UTC, a few hundred hour rows instead of 8,760 (per key).
   */
  private dayAndHourRows(
    tables: { days: string; hours: string },
    owned: (query: Knex.QueryBuilder, alias: string) => Knex.QueryBuilder,
    columns: { keys: readonly string[]; figures: readonly string[] },
    hours: Required<TimeRange>,
    interval: StatsInterval,
    starts: readonly Date[],
  ): Knex.QueryBuilder {
    const days = interval === 'hour' ? null : dayPlan(hours).days;
    if (!days) {
      const query = owned(this.db(`${tables.hours} as o`), 'o');
      return query.where('o.hour', '>=', hours.from).where('o.hour', '<', hours.before);
    }
    const [from, before] = [days.from!, days.before!];
    const selected = [...columns.keys, ...columns.figures];
    const dayRows = owned(this.db(`${tables.days} as d`), 'd')
      .where('d.day', '>=', from)
      .where('d.day', '<', before)
      .select(this.db.raw(`(d.day + time '12:00') AT TIME ZONE 'UTC' AS hour`), ...selected.map((c) => `d.${c}`));
    const needed = dayHours(hours, { from: dayStart(from), before: dayStart(before) }, starts);
    if (needed.length === 0) return this.db.from(this.db.raw('(?) AS o', [dayRows]));
    const hoursOfDay = [...new Set(needed.map((at) => at.getUTCHours()))];
    // The hours of the day and the range are the index's; the exact hours are checked on its
    // entries (`IS TRUE`: not one index search per hour).
    const hourRows = owned(this.db(`${tables.hours} as o`), 'o')
      .whereRaw(`${HOUR_OF_DAY} = ANY(?::integer[])`, [`{${hoursOfDay.join(',')}}`])
      .where('o.hour', '>=', hours.from)
      .where('o.hour', '<', hours.before)
      .whereRaw('(o.hour = ANY(?::timestamptz[])) IS TRUE', [`{${needed.map((at) => at.toISOString()).join(',')}}`])
      .select('o.hour', ...selected.map((c) => `o.${c}`));
    const list = selected.join(', ');
    const negated = [...columns.keys, ...columns.figures.map((c) => `-${c}`)].join(', ');
    const rows = this.db.raw(
      `(WITH h AS MATERIALIZED (?)
        SELECT hour, ${list} FROM (?) d
        UNION ALL SELECT hour, ${list} FROM h
        UNION ALL SELECT date_trunc('day', hour, 'UTC') + interval '12 hours', ${negated}
                    FROM h WHERE hour >= ? AND hour < ?) AS o`,
      [hourRows, dayRows, dayStart(from), dayStart(before)],
    );
    return this.db.from(rows);
  }

  /** Per bucket, the stored value as text (as `->>` gives it). */
  private byValue(interval: StatsInterval, starts: readonly Date[]): readonly [Knex.Raw, Knex.Raw] {
    return [this.bucketOf('o.hour', interval, starts), this.db.raw(`o.value #>> '{}' AS value`)];
  }

  /**
   * One agent's outcome counters of field `name` for whole UTC hours [from, before): per bucket and
   * stored value, calls and done calls with their durations; only `value` when given (a JSON
   * value), trash only with `include_deleted`. The done filter and the grouping are applied by the
   * caller on these four figures.
   */
  async outcomeCounts(...args: OutcomeRowsArgs): Promise<OutcomeRow[]> {
    const [, , , , interval, starts] = args;
    const query = this.outcomeRows(...args);
    const figures = {
      calls: 'sum(o.calls)',
      done_calls: 'sum(o.done_calls)',
      duration: 'sum(o.duration_total)',
      done_duration: 'sum(o.done_duration_total)',
    };
    const rows = await this.sumsPerBucket(query, this.byValue(interval, starts), figures);
    return this.readSums(rows, ['calls', 'done_calls', 'duration', 'done_duration'], starts) as OutcomeRow[];
  }

  /**
   * Grouped by an outcome field with no condition on it, in one statement (so in one snapshot): per
   * bucket, the calls of each stored value from the outcome counters (`values`: count and done as
   * the done filter takes them, duration 0) and the figures of all calls from the hour counters
   * (`all`, value null). A bucket's totals are those of all its calls, so the values need no
   * durations, and what they leave is the calls without the field.
   */
  async outcomeGroups(
    scope: StatsScope,
    field: { agentId: string; name: string },
    filters: Pick<ListCallsFilters, 'done' | 'include_deleted'>,
    hours: Required<TimeRange>,
    interval: StatsInterval,
    starts: readonly Date[],
  ): Promise<{ values: StatsRow[]; all: StatsRow[] }> {
    const counted = filters.done === undefined ? 'o.calls' : filters.done ? 'o.done_calls' : 'o.calls - o.done_calls';
    const owner = { organizationId: scope.organizationId, agentId: field.agentId };
    const query = this.outcomeRows(owner, field, filters.include_deleted, hours, interval, starts);
    query.havingRaw(`sum(${counted}) > 0`);
    const values = this.sumsPerBucket(query, this.byValue(interval, starts), {
      count: `sum(${counted})`,
      done: filters.done === false ? '0' : 'sum(o.done_calls)',
      duration_total: '0::double precision',
      all_calls: 'false',
    });
    const all = this.hourSums(scope, filters, hours, interval, { kind: 'none' }, starts);
    const { rows } = (await this.db.raw('? UNION ALL ?', [values, all.select(this.db.raw('true AS all_calls'))])) as {
      rows: { all_calls: boolean }[];
    };
    const sums = this.readSums(rows, STATS_FIGURES, starts);
    return { values: sums.filter((_, i) => !rows[i]!.all_calls), all: sums.filter((_, i) => rows[i]!.all_calls) };
  }

  /** Calls matching the filters, counted per bucket start and group value. */
  async counts(
    scope: StatsScope,
    filters: ListCallsFilters,
    range: Required<TimeRange>,
    interval: StatsInterval,
    tz: string,
    group: StatsGroup,
  ): Promise<StatsRow[]> {
    const query = this.db('calls as c').where('c.organization_id', scope.organizationId);
    if (scope.agentIds !== null) query.whereIn('c.agent_id', [...scope.agentIds]);
    whereCallFilters(query, filters, range);
    const [expression, bindings] = groupSql(group);
    const selected = [
      this.db.raw('date_trunc(?, c.created_at, ?) AS start', [interval, tz]),
      this.db.raw(`${expression} AS value`, bindings),
    ] as const;
    const figures = {
      count: 'count(*)',
      done: 'count(*) FILTER (WHERE c.done)',
      duration_total: 'coalesce(sum(c.duration), 0)',
    };
    return this.readSums(await this.sumsPerBucket(query, selected, figures), STATS_FIGURES, []);
  }

  /**
   * Aggregates per bucket and group value (`selected`: the two columns, AS start and AS value), each
   * figure an SQL aggregate named by its key.
   */
  private sumsPerBucket(
    query: Knex.QueryBuilder,
    [start, value]: readonly [Knex.Raw, Knex.Raw],
    figures: Readonly<Record<string, string>>,
  ): Knex.QueryBuilder {
    const names = Object.keys(figures);
    return query
      .select(start, value, ...names.map((name) => this.db.raw(`${figures[name]} AS ${name}`)))
      .groupByRaw('1, 2');
  }

  /**
   * Rows of sumsPerBucket with each figure read back as a number (PostgreSQL returns bigint sums and
   * counts as strings) and each bucket as its start (a number from bucketOf is a position in `starts`).
   */
  private readSums<F extends string>(
    rows: readonly unknown[],
    names: readonly F[],
    starts: readonly Date[],
  ): ({ start: Date; value: string | null } & Record<F, number>)[] {
    return (rows as ({ start: Date | number; value: string | null } & Record<F, string>)[]).map((r) => {
      const start = typeof r.start === 'number' ? starts[Math.max(r.start, 1) - 1]! : r.start;
      const row = { start, value: r.value } as { start: Date; value: string | null } & Record<F, number>;
      for (const name of names) row[name] = Number(r[name]) as (typeof row)[F];
      return row;
    });
  }
}

/** The figures of a statistics row. */
const STATS_FIGURES = ['count', 'done', 'duration_total'] as const;

/** The figures of an outcome counter row (hour or day). */
const FIGURE_COLUMNS = ['calls', 'done_calls', 'duration_total', 'done_duration_total'] as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The UTC hour of the day of an hour row's `hour` (o), as the indexes call_outcome_hour_stats_by_hour_of_day
 * and call_hour_stats_by_hour_of_day have it (migrations/20261130040000_count_call_outcomes_by_day.ts,
 * 20261130050000_count_call_durations_by_day.ts).
 */
const HOUR_OF_DAY = `(extract(hour FROM o.hour AT TIME ZONE 'UTC'))::integer`;

function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

/**
 * The hours whose hour rows outcomeRows needs beside the day rows of the whole UTC days [from,
 * before) (both within `hours`): the hours of `hours` outside those days, and of each day the hours
 * that lie in another bucket than its 12:00 (the buckets start at `starts`, in order, on whole hours).
 */
function dayHours(hours: Required<TimeRange>, days: { from: Date; before: Date }, starts: readonly Date[]): Date[] {
  const needed: Date[] = [];
  const add = (from: number, before: number) => {
    for (let at = from; at < before; at += HOUR_MS) needed.push(new Date(at));
  };
  add(hours.from.getTime(), days.from.getTime());
  let i = 0;
  for (let day = days.from.getTime(); day < days.before.getTime(); day += DAY_MS) {
    const noon = day + DAY_MS / 2;
    while (i + 1 < starts.length && starts[i + 1]!.getTime() <= noon) i += 1;
    const start = starts[i]!.getTime() <= noon ? starts[i]!.getTime() : -Infinity;
    const end = i + 1 < starts.length && starts[i + 1]!.getTime() > noon ? starts[i + 1]!.getTime() : Infinity;
    add(day, Math.min(start, day + DAY_MS));
    add(Math.max(end, day), day + DAY_MS);
  }
  add(days.before.getTime(), hours.before.getTime());
  return needed;
}
