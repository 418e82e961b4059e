import { DEFAULT_TIME_ZONE } from '../agents/agent-status.js';
import { holidayLookup } from '../agents/holidays.js';
import {
  NEXT_CHANGE_HORIZON_DAYS,
  parseTime,
  ruleCovers,
  type HolidayLookup,
  type Schedule,
} from '../agents/schedule.js';
import { exceptionBoundaryMinutes, exceptionDecision, type ScheduleException } from '../agents/schedule-exceptions.js';
import { addDays, instantsAt, offsetChangesOn, zonedParts } from '../agents/zoned-time.js';

/**
 * When an outbound call may be placed: pure functions over the job's window, the agent's opening
 * hours, public holidays, schedule exceptions and vacation, and the job's not_before / not_after.
 * The zone arithmetic is the agents module's (zoned-time.ts), so DST is handled the same way.
 */

/** Local weekdays (0 = Sunday ... 6 = Saturday) and `HH:mm` times, `to` exclusive (`24:00` allowed). */
export type CallingWindow = { days: number[]; from: string; to: string };

export const DEFAULT_WINDOW: CallingWindow = { days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' };

/** Why a moment is not allowed. */
export type BlockReason = 'not_before' | 'deadline' | 'vacation' | 'sunday' | 'holiday' | 'exception' | 'closed';

export type WindowRules = {
  timezone: string;
  window: CallingWindow;
  /** The agent's weekly opening hours when the job respects them; null = no such limit. */
  openingHours: Schedule['rules'] | null;
  /** The agent's schedule exceptions: a closed exception (or outside its hours) always blocks. */
  exceptions: readonly ScheduleException[];
  holidayOn: HolidayLookup;
  /** On vacation until this instant (ms); `Infinity` while vacation mode has no end; null = not on vacation. */
  vacationUntil: number | null;
  notBefore: number | null;
  notAfter: number | null;
};

export type WindowAgent = {
  schedule: Schedule | null;
  bundesland: string;
  vacation_mode: boolean;
  vacation_end: Date | string | null;
};

export type WindowJob = {
  window: CallingWindow;
  respect_opening_hours: boolean;
  not_before: Date | string | null;
  not_after: Date | string | null;
};

const ms = (value: Date | string | null): number | null => (value === null ? null : new Date(value).getTime());

/** The rules of one job of one agent, as they are now (the agent's schedule may change later). */
export function windowRules(agent: WindowAgent, job: WindowJob): WindowRules {
  const vacationEnd = ms(agent.vacation_end);
  return {
    timezone: agent.schedule?.timezone ?? DEFAULT_TIME_ZONE,
    window: job.window,
    openingHours: job.respect_opening_hours && agent.schedule ? agent.schedule.rules : null,
    exceptions: agent.schedule?.exceptions ?? [],
    holidayOn: holidayLookup(agent.bundesland),
    vacationUntil: agent.vacation_mode ? (vacationEnd ?? Infinity) : null,
    notBefore: ms(job.not_before),
    notAfter: ms(job.not_after),
  };
}

/** null when a call may be placed at `at`, else the first rule that forbids it. */
export function blockedReason(rules: WindowRules, at: number): BlockReason | null {
  if (rules.notBefore !== null && at < rules.notBefore) return 'not_before';
  if (rules.notAfter !== null && at > rules.notAfter) return 'deadline';
  if (rules.vacationUntil !== null && at < rules.vacationUntil) return 'vacation';
  return dayReason(rules, at);
}

/** The reasons that depend on the local calendar and clock only. */
function dayReason(rules: WindowRules, at: number): BlockReason | null {
  const local = zonedParts(rules.timezone, at);
  if (local.weekday === 0) return 'sunday';
  if (rules.holidayOn(local.date)) return 'holiday';
  const exception =
    rules.exceptions.length === 0
      ? undefined
      : exceptionDecision(rules.exceptions, local.date, addDays(local.date, -1), local.minute);
  if (exception && !exception.open) return 'exception';
  const { window } = rules;
  const from = parseTime(window.from) ?? 0;
  const to = parseTime(window.to, true) ?? 0;
  if (!window.days.includes(local.weekday) || local.minute < from || local.minute >= to) return 'closed';
  // An exception's special hours replace the weekly opening hours on its day.
  if (!exception && rules.openingHours && !rules.openingHours.some((r) => ruleCovers(r, local.weekday, local.minute)))
    return 'closed';
  return null;
}

export function isAllowed(rules: WindowRules, at: number): boolean {
  return blockedReason(rules, at) === null;
}

/** Local minutes at which the answer can change. */
function boundaryMinutes(rules: WindowRules): number[] {
  const minutes = new Set<number>([
    0,
    parseTime(rules.window.from) ?? 0,
    (parseTime(rules.window.to, true) ?? 0) % 1440,
  ]);
  for (const rule of rules.openingHours ?? []) {
    minutes.add(parseTime(rule.start_time) ?? 0);
    minutes.add((parseTime(rule.end_time, true) ?? 0) % 1440);
  }
  for (const minute of exceptionBoundaryMinutes(rules.exceptions)) minutes.add(minute);
  return [...minutes];
}

/**
 * The first instant at or after `from` whose answer is `allowed` (true: the first allowed moment;
 * false: the end of the allowed period `from` is in), or null when there is none before not_after
 * (or within the horizon). The answer changes only where the local clock passes a boundary or
 * midnight, where the clocks change (DST), at not_before and at the vacation's end, so only those
 * instants are tested, day by day.
 */
export function nextInstant(rules: WindowRules, from: number, allowed = true): number | null {
  if (isAllowed(rules, from) === allowed) return from;
  if (allowed && rules.vacationUntil === Infinity) return null;
  const minutes = boundaryMinutes(rules);
  const extras = [rules.notBefore, rules.vacationUntil, rules.notAfter === null ? null : rules.notAfter + 1].filter(
    (t): t is number => t !== null && Number.isFinite(t) && t > from,
  );
  const today = zonedParts(rules.timezone, from).date;
  for (let day = 0; day <= NEXT_CHANGE_HORIZON_DAYS; day++) {
    const date = addDays(today, day);
    const candidates = minutes.flatMap((m) => instantsAt(rules.timezone, date, m));
    candidates.push(...offsetChangesOn(rules.timezone, date));
    candidates.push(...extras.filter((t) => zonedParts(rules.timezone, t).date === date));
    candidates.sort((a, b) => a - b);
    for (const instant of candidates) {
      if (instant <= from) continue;
      if (allowed && rules.notAfter !== null && instant > rules.notAfter) return null;
      if (isAllowed(rules, instant) === allowed) return instant;
    }
  }
  return null;
}

/**
 * When to hand a job out: the first allowed moment at or after `from`. An open-ended vacation
 * (vacation mode without an end) is left out here, because nobody can say when it ends: the job
 * gets the moment it would have without it, and the claim checks again then (see OutboundService).
 */
export function nextAllowed(rules: WindowRules, from: number): number | null {
  const planned = rules.vacationUntil === Infinity ? { ...rules, vacationUntil: null } : rules;
  return nextInstant(planned, from, true);
}

export type SkippedDay = { date: string; reason: 'holiday' | 'sunday' | 'exception' | 'vacation' | 'closed' };
export type PreviewMoment = { at: string; until: string | null; skipped: SkippedDay[] };

/** Why a whole local day has no allowed moment (judged at the window's opening on that day). */
function skippedReason(rules: WindowRules, date: string): SkippedDay['reason'] | null {
  const [at] = instantsAt(rules.timezone, date, parseTime(rules.window.from) ?? 0);
  const reason = blockedReason({ ...rules, notBefore: null, notAfter: null }, at!);
  if (reason === null) return null;
  return reason === 'not_before' || reason === 'deadline' ? 'closed' : reason;
}

/**
 * The next `count` allowed periods from `from`: each with its start, its end, and the local days
 * skipped before it (with the reason).
 */
export function previewMoments(rules: WindowRules, from: number, count: number): PreviewMoment[] {
  const moments: PreviewMoment[] = [];
  let cursor = from;
  let lastDate = zonedParts(rules.timezone, Math.max(from, rules.notBefore ?? from)).date;
  let first = true;
  while (moments.length < count) {
    const at = nextInstant(rules, cursor, true);
    if (at === null) break;
    const date = zonedParts(rules.timezone, at).date;
    const skipped: SkippedDay[] = [];
    for (let d = first ? lastDate : addDays(lastDate, 1); d < date; d = addDays(d, 1)) {
      const reason = skippedReason(rules, d);
      // The day `from` falls on is skipped only when the day itself is closed, not because it is late.
      if (reason !== null) skipped.push({ date: d, reason });
      else if (!(first && d === lastDate)) skipped.push({ date: d, reason: 'closed' });
    }
    const until = nextInstant(rules, at, false);
    moments.push({
      at: new Date(at).toISOString(),
      until: until === null ? null : new Date(until).toISOString(),
      skipped,
    });
    if (until === null) break;
    cursor = until;
    lastDate = date;
    first = false;
  }
  return moments;
}
