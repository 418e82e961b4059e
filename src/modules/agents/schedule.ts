import { exceptionBoundaryMinutes, exceptionDecision, type ScheduleException } from './schedule-exceptions.js';
import { addDays, instantsAt, offsetChangesOn, zonedParts } from './zoned-time.js';

export type ScheduleRule = { days: number[]; start_time: string; end_time: string };
export type Schedule = { timezone: string; rules: ScheduleRule[]; exceptions?: ScheduleException[] };
export type Holiday = { date: string; name: string };
/** The public holiday on a local date (`YYYY-MM-DD`), or null. */
export type HolidayLookup = (date: string) => Holiday | null;

/** How far ahead `nextScheduleChange` looks: a year and a bit, so every holiday of a year is seen. */
export const NEXT_CHANGE_HORIZON_DAYS = 400;

const TIME = /^(\d{2}):(\d{2})$/;

/** `HH:mm` as minutes since midnight; `24:00` only when `allowEndOfDay`. Undefined when not a real time. */
export function parseTime(value: string, allowEndOfDay = false): number | undefined {
  const match = TIME.exec(value);
  if (!match) return undefined;
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (allowEndOfDay && hours === 24 && minutes === 0) return 1440;
  if (hours > 23 || minutes > 59) return undefined;
  return hours * 60 + minutes;
}

/**
 * Whether a rule covers local `weekday` at `minute`. A rule whose end is not after its start runs
 * past midnight: it covers its days from the start and the following days until the end.
 */
export function ruleCovers(rule: ScheduleRule, weekday: number, minute: number): boolean {
  const start = parseTime(rule.start_time) ?? 0;
  const end = parseTime(rule.end_time, true) ?? 0;
  if (end > start) return rule.days.includes(weekday) && minute >= start && minute < end;
  const previous = (weekday + 6) % 7;
  return (rule.days.includes(weekday) && minute >= start) || (rule.days.includes(previous) && minute < end);
}

/** Which layer decided: a dated exception, a public holiday, or the weekly rules. */
export type ScheduleReason = 'exception' | 'holiday' | 'schedule';

export type ScheduleDecision = {
  open: boolean;
  reason: ScheduleReason;
  exception: ScheduleException | null;
};

/**
 * Open or closed at `at`, and why. Exceptions come first (see exceptionDecision), then a public
 * holiday closes its whole local day (including the part of an overnight rule), then the weekly rules.
 */
export function scheduleDecision(schedule: Schedule, holidayOn: HolidayLookup, at: Date | number): ScheduleDecision {
  const local = zonedParts(schedule.timezone, at);
  const exception = exceptionDecision(schedule.exceptions, local.date, addDays(local.date, -1), local.minute);
  if (exception) return { open: exception.open, reason: 'exception', exception: exception.exception };
  if (holidayOn(local.date)) return { open: false, reason: 'holiday', exception: null };
  const open = schedule.rules.some((rule) => ruleCovers(rule, local.weekday, local.minute));
  return { open, reason: 'schedule', exception: null };
}

/** Inside the schedule at `at` (exceptions, holidays and weekly rules applied). */
export function isWithinSchedule(schedule: Schedule, holidayOn: HolidayLookup, at: Date | number): boolean {
  return scheduleDecision(schedule, holidayOn, at).open;
}

/** Local times at which the answer can change: rule starts and ends, and midnight (day and holiday changes). */
function boundaryMinutes(schedule: Schedule): number[] {
  const minutes = new Set<number>([0]);
  for (const rule of schedule.rules) {
    minutes.add(parseTime(rule.start_time) ?? 0);
    minutes.add((parseTime(rule.end_time, true) ?? 0) % 1440);
  }
  for (const minute of exceptionBoundaryMinutes(schedule.exceptions)) minutes.add(minute);
  return [...minutes];
}

/**
 * The first instant after `at` at which `isWithinSchedule` gives the other answer, or null when it
 * does not change within the horizon (no rules, or never closed). The answer only changes when the
 * local clock passes a rule boundary or midnight, or jumps at a DST switch, so only those instants
 * are tested, day by day.
 */
export function nextScheduleChange(schedule: Schedule, holidayOn: HolidayLookup, at: Date): Date | null {
  const now = at.getTime();
  const current = isWithinSchedule(schedule, holidayOn, now);
  const minutes = boundaryMinutes(schedule);
  const today = zonedParts(schedule.timezone, now).date;
  for (let day = 0; day <= NEXT_CHANGE_HORIZON_DAYS; day++) {
    const date = addDays(today, day);
    const candidates = minutes.flatMap((m) => instantsAt(schedule.timezone, date, m));
    candidates.push(...offsetChangesOn(schedule.timezone, date));
    candidates.sort((a, b) => a - b);
    for (const instant of candidates) {
      if (instant > now && isWithinSchedule(schedule, holidayOn, instant) !== current) return new Date(instant);
    }
  }
  return null;
}
