import { assertPermission, reachableOrganizations, type AuthContext } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import type { ReadRouting } from '../../db/replicas.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { AnalysisField } from '../agents/analysis-fields.js';
import { timeRange } from './call.rules.js';
import { zonedParts } from '../agents/zoned-time.js';
import { parseCallsQuery } from './call.service.js';
import type { CallStatsRepository, OutcomeRow, StatsGroup, StatsRow, StatsScope } from './call-stats.repository.js';
import { countedOutcomeFilter } from './extracted-filters.js';
import { CallStatsQuery, type CallStats, type CallStatsBucket, type StatsInterval } from './call-stats.schemas.js';
import type { ListCallsFilters } from './call.schemas.js';

const NONE = 'none';
const HOUR = 3_600_000;

/**
 * True when the zone's offset from UTC is whole hours throughout [from, before) (checked weekly, and
 * offsets change at most a few times a year): then every UTC hour lies inside one local bucket.
 */
export function wholeHourOffsets(tz: string, from: Date, before: Date): boolean {
  const step = 7 * 86_400_000;
  for (let at = from.getTime(); ; at = Math.min(at + step, before.getTime())) {
    const minuteStart = Math.floor(at / 60_000) * 60_000;
    if ((zonedParts(tz, at).wallMs - minuteStart) % HOUR !== 0) return false;
    if (at >= before.getTime()) return true;
  }
}

/** Groupings by a column of the call, which both statistics endpoints take (only done has counters). */
const CALL_COLUMN_GROUPS = ['done', 'employee', 'direction', 'variant'] as const;

/**
 * `group_by` of a statistics query: done, employee, direction, variant (the experiment variant's
 * name), agent (organization only) or an enum or boolean analysis field of the agent
 * (`extracted.<name>`); anything else is a 400 naming it.
 */
function groupOf(
  value: string | undefined,
  fields: readonly AnalysisField[] | null,
  organization: boolean,
): StatsGroup {
  if (value === undefined) return { kind: 'none' };
  const column = CALL_COLUMN_GROUPS.find((group) => group === value);
  if (column) return { kind: column };
  if (value === 'agent' && organization) return { kind: 'agent' };
  if (fields && value.startsWith('extracted.')) {
    const field = fields.find((f) => `extracted.${f.name}` === value);
    if (field && (field.type === 'enum' || field.type === 'boolean')) return { kind: 'extracted', name: field.name };
  }
  const choices = `${CALL_COLUMN_GROUPS.join(', ')} or ${organization ? 'agent' : 'extracted.<enum or boolean field>'}`;
  throw new ValidationError('Invalid query parameters', [{ field: 'group_by', message: `Must be ${choices}` }]);
}

function figures(count: number, done: number, durationTotal: number) {
  return { count, done, duration_total: durationTotal, duration_avg: count === 0 ? null : durationTotal / count };
}

/** Buckets in order, empty ones included; every counted row lands in exactly one, so the sums agree. */
function assemble(starts: Date[], rows: StatsRow[], grouped: boolean): CallStatsBucket[] {
  const sums = starts.map(() => ({ count: 0, done: 0, duration: 0, groups: {} as Record<string, number> }));
  const index = new Map(starts.map((start, i) => [start.getTime(), i]));
  for (const row of rows) {
    let i = index.get(row.start.getTime());
    // Not expected (the series and date_trunc agree); still counted, in the bucket that holds the instant.
    if (i === undefined) {
      i = 0;
      starts.forEach((s, j) => {
        if (s.getTime() <= row.start.getTime()) i = j;
      });
    }
    const sum = sums[i]!;
    sum.count += row.count;
    sum.done += row.done;
    sum.duration += row.duration_total;
    const key = row.value ?? NONE;
    // A row without calls carries figures only (the duration of the calls of other groups).
    if (grouped && row.count > 0) sum.groups[key] = (sum.groups[key] ?? 0) + row.count;
  }
  return starts.map((start, i) => {
    const sum = sums[i]!;
    const bucket: CallStatsBucket = { start: start.toISOString(), ...figures(sum.count, sum.done, sum.duration) };
    if (grouped) bucket.groups = sum.groups;
    return bucket;
  });
}

/** Which counters answer a statistics query for its whole hours (null: count the calls). */
type CounterPlan =
  { kind: 'hours' } | { kind: 'outcomes'; agentId: string; name: string; value?: string | number | boolean };

/**
 * The hour counters keep done and trash per agent: no outcome filter, grouped by nothing, done or
 * agent. The outcome counters keep one enum or boolean field of one agent: grouped by it, or one
 * `extracted.<name>=` condition on it (grouped by nothing, done or that field). A phone number or a
 * search is never counted.
 */
function counterPlan(scope: StatsScope, filters: ListCallsFilters, group: StatsGroup): CounterPlan | null {
  if (filters.phone_number || filters.search) return null;
  const agentId = scope.agentIds?.length === 1 ? scope.agentIds[0]! : undefined;
  if ((filters.extracted?.length ?? 0) === 0) {
    if (group.kind === 'none' || group.kind === 'done' || group.kind === 'agent') return { kind: 'hours' };
    // groupOf admits enum and boolean fields only: those are counted.
    if (group.kind === 'extracted' && agentId) return { kind: 'outcomes', agentId, name: group.name };
    return null;
  }
  const outcome = countedOutcomeFilter(filters.extracted);
  if (!outcome || !agentId) return null;
  if (group.kind === 'none' || group.kind === 'done' || (group.kind === 'extracted' && group.name === outcome.name))
    return { kind: 'outcomes', agentId, name: outcome.name, value: outcome.value };
  return null;
}

/**
 * One bucket's counters of one stored value as statistics rows: the done filter picks done or not
 * done calls, `group_by=done` splits them, `group_by=extracted.<name>` names the value.
 */
function outcomeRows(row: OutcomeRow, done: boolean | undefined, group: StatsGroup): StatsRow[] {
  const value = group.kind === 'extracted' ? row.value : null;
  const doneRow = {
    start: row.start,
    value,
    count: row.done_calls,
    done: row.done_calls,
    duration_total: row.done_duration,
  };
  const openRow = {
    start: row.start,
    value,
    count: row.calls - row.done_calls,
    done: 0,
    duration_total: row.duration - row.done_duration,
  };
  let rows: StatsRow[];
  if (group.kind === 'done')
    rows = [
      { ...doneRow, value: 'true' },
      { ...openRow, value: 'false' },
    ];
  else if (done === undefined)
    rows = [{ start: row.start, value, count: row.calls, done: row.done_calls, duration_total: row.duration }];
  else rows = [doneRow, openRow];
  return rows.filter((r) => r.count > 0 && (done === undefined || r.done > 0 === done));
}

/** Call statistics per time bucket, for one agent or a whole organization (calls:read). */
export class CallStatsService {
  constructor(
    private readonly stats: CallStatsRepository,
    private readonly access: AgentAccess,
    /** Statistics read from a healthy replica when there is one (src/db/replicas.ts). */
    private readonly reads?: ReadRouting,
  ) {}

  /** The same service reading through `db` (a replica or the primary). */
  private on(db: Db): CallStatsService {
    return new CallStatsService(this.stats.with(db), this.access);
  }

  /** One agent's calls; `tz` defaults to the agent's schedule time zone, `extracted.<name>` filters apply. */
  async forAgent(auth: AuthContext, agentId: string, query: unknown): Promise<CallStats> {
    if (this.reads?.configured) return this.reads.read(auth, (db) => this.on(db).forAgent(auth, agentId, query));
    const agent = await this.access.resolve(auth, agentId, 'calls:read');
    const { from, to, interval, tz, group_by, ...filters } = parseCallsQuery(CallStatsQuery, agent, query);
    const group = groupOf(group_by, agent.analysis_fields ?? [], false);
    const scope = { organizationId: agent.organization_id, agentIds: [agent.id] };
    const zone = tz ?? agent.schedule?.timezone ?? 'UTC';
    return this.compute(scope, filters, { from, to, interval, tz: zone, group_by, group });
  }

  /** Every agent of the organization the caller may read; `tz` defaults to UTC, `group_by=agent` too. */
  async forOrganization(auth: AuthContext, organizationId: string, query: unknown): Promise<CallStats> {
    if (this.reads?.configured)
      return this.reads.read(auth, (db) => this.on(db).forOrganization(auth, organizationId, query));
    assertPermission(auth, 'calls:read');
    const id = organizationId.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, 'calls:read', id);
    const raw = (query ?? {}) as Record<string, unknown>;
    // Analysis fields belong to each agent: outcome filters are per agent (GET /v1/agents/{agentId}/calls/stats).
    const details = Object.keys(raw)
      .filter((key) => key.startsWith('extracted.'))
      .map((field) => ({ field, message: 'Outcome filters apply to one agent: use /v1/agents/{agentId}/calls/stats' }));
    const parsed = CallStatsQuery.safeParse(raw);
    if (details.length > 0 || !parsed.success) {
      throw new ValidationError('Invalid query parameters', [
        ...(parsed.success ? [] : zodIssuesToDetails(parsed.error.issues)),
        ...details,
      ]);
    }
    const { from, to, interval, tz, group_by, ...filters } = parsed.data;
    const group = groupOf(group_by, null, true);
    const scope = { organizationId: id, agentIds: auth.allowedAgentIds };
    return this.compute(scope, filters, { from, to, interval, tz: tz ?? 'UTC', group_by, group });
  }

  /**
   * The counted rows: from counters for the whole hours of the range when the filters and the
   * grouping are ones they keep (`counterPlan`) and every offset of the zone in the range is whole
   * hours, plus the partial hours at the edges from the calls; otherwise from the calls alone.
   */
  private async rows(
    scope: StatsScope,
    filters: ListCallsFilters,
    range: { from: Date; before: Date },
    q: { interval: StatsInterval; tz: string; group: StatsGroup; starts: readonly Date[] },
  ): Promise<StatsRow[]> {
    const plan = counterPlan(scope, filters, q.group);
    const hours = {
      from: new Date(Math.ceil(range.from.getTime() / HOUR) * HOUR),
      before: new Date(Math.floor(range.before.getTime() / HOUR) * HOUR),
    };
    if (!plan || hours.from.getTime() >= hours.before.getTime() || !wholeHourOffsets(q.tz, range.from, range.before))
      return this.stats.counts(scope, filters, range, q.interval, q.tz, q.group);
    const parts = [
      plan.kind === 'hours'
        ? this.stats.countsFromHours(scope, filters, hours, q.interval, q.group, q.starts)
        : this.fromOutcomes(scope, filters, hours, q, plan),
    ];
    if (range.from.getTime() < hours.from.getTime())
      parts.push(
        this.stats.counts(scope, filters, { from: range.from, before: hours.from }, q.interval, q.tz, q.group),
      );
    if (hours.before.getTime() < range.before.getTime())
      parts.push(
        this.stats.counts(scope, filters, { from: hours.before, before: range.before }, q.interval, q.tz, q.group),
      );
    return (await Promise.all(parts)).flat();
  }

  /**
   * Whole hours from the outcome counters. With an outcome condition, its value's counters are the
   * rows. Grouped by a field without one, each stored value is a group, and the calls without the
   * field ("none") are what the hour counters hold beyond them: all calls' figures minus the values'
   * calls, which leaves the bucket its totals (outcomeGroups).
   */
  private async fromOutcomes(
    scope: StatsScope,
    filters: ListCallsFilters,
    hours: { from: Date; before: Date },
    q: { interval: StatsInterval; group: StatsGroup; starts: readonly Date[] },
    plan: Extract<CounterPlan, { kind: 'outcomes' }>,
  ): Promise<StatsRow[]> {
    if (plan.value !== undefined) {
      const owner = { organizationId: scope.organizationId, agentId: plan.agentId };
      const field = { name: plan.name, value: plan.value };
      const values = await this.stats.outcomeCounts(owner, field, filters.include_deleted, hours, q.interval, q.starts);
      return values.flatMap((row) => outcomeRows(row, filters.done, q.group));
    }
    const field = { agentId: plan.agentId, name: plan.name };
    const { values, all } = await this.stats.outcomeGroups(scope, field, filters, hours, q.interval, q.starts);
    const rest = new Map(all.map((row) => [row.start.getTime(), { ...row }]));
    for (const row of values) {
      const left = rest.get(row.start.getTime());
      if (!left) continue;
      left.count -= row.count;
      left.done -= row.done;
    }
    return [...values, ...rest.values()];
  }

  private async compute(
    scope: StatsScope,
    filters: ListCallsFilters,
    q: { from: string; to: string; interval: StatsInterval; tz: string; group_by?: string; group: StatsGroup },
  ): Promise<CallStats> {
    const { from, before } = timeRange(q.from, q.to);
    const range = { from: from!, before: before! };
    // The starts first: the counters are put into buckets by searching them.
    const starts = await this.stats.bucketStarts(q.interval, q.tz, range);
    const rows = await this.rows(scope, filters, range, { ...q, starts });
    const buckets = assemble(starts, rows, q.group.kind !== 'none');
    const total = buckets.reduce(
      (t, b) => ({ count: t.count + b.count, done: t.done + b.done, duration: t.duration + b.duration_total }),
      { count: 0, done: 0, duration: 0 },
    );
    return {
      interval: q.interval,
      tz: q.tz,
      from: range.from.toISOString(),
      to: range.before.toISOString(),
      group_by: q.group_by ?? null,
      totals: figures(total.count, total.done, total.duration),
      buckets,
    };
  }
}
