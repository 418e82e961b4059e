/** Pure rules of call intake and filtering. */

import { normalizeCallerNumber } from '../../phone/phone-number.js';

/** Calls shorter than this are marked done on intake when the agent has `short_calls_auto_edit`. */
export const SHORT_CALL_SECONDS = 10;

/** Retention of call data when the agent has none configured (`retention_days: null`). */
export const DEFAULT_RETENTION_DAYS = 90;

/**
 * A caller number as calls store and look it up: E.164 when it is a valid number in any written form
 * (`030/1234567`, `0049 30 1234567`, `49301234567` all become `+49301234567`), so that one person has
 * one number across calls, contacts and erasure. Anything else (`anonymous`, an extension) keeps its
 * written form with spaces, dashes and brackets removed.
 */
export function callerNumberOf(value: string): string {
  return normalizeCallerNumber(value) ?? value.replace(/[\s\-()]/g, '');
}

export function intakeOutcome(
  call: { duration: number; done: boolean },
  settings: { shortCallsAutoEdit: boolean; autoDeleteDoneCalls: boolean },
): { done: boolean; trash: boolean } {
  const done = call.done || (settings.shortCallsAutoEdit && call.duration < SHORT_CALL_SECONDS);
  return { done, trash: done && settings.autoDeleteDoneCalls };
}

/** A PATCH that marks a call done moves it to the trash when the organization auto-deletes done calls. */
export function trashOnDone(wasDone: boolean, nowDone: boolean | undefined, autoDeleteDoneCalls: boolean): boolean {
  return nowDone === true && !wasDone && autoDeleteDoneCalls;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/**
 * `from` and `to` are both inclusive. A date-only bound covers the whole UTC day, so
 * `from=2026-03-01&to=2026-03-31` is all of March. Returns a half-open range [from, before).
 */
export function timeRange(from: string | undefined, to: string | undefined): { from?: Date; before?: Date } {
  const range: { from?: Date; before?: Date } = {};
  if (from) range.from = new Date(DATE_ONLY.test(from) ? `${from}T00:00:00.000Z` : from);
  if (to) {
    range.before = DATE_ONLY.test(to)
      ? new Date(new Date(`${to}T00:00:00.000Z`).getTime() + DAY_MS)
      : new Date(new Date(to).getTime() + 1);
  }
  return range;
}

/** LIKE pattern for a case-insensitive "contains", with the user's wildcards taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export type TimeRange = { from?: Date; before?: Date };

/**
 * How to count a [from, before) range exactly from per-day counters: the whole UTC days inside it
 * (`days`, as dates, null when there is none) plus the partial days at its edges, which are counted
 * row by row (at most two days' worth of calls).
 */
export function countPlan(range: TimeRange): { days: { from?: string; before?: string } | null; edges: TimeRange[] } {
  const startOfDay = (d: Date) => new Date(Math.floor(d.getTime() / DAY_MS) * DAY_MS);
  const dayOf = (d: Date) => d.toISOString().slice(0, 10);
  const lo = range.from ? new Date(Math.ceil(range.from.getTime() / DAY_MS) * DAY_MS) : undefined;
  const hi = range.before ? startOfDay(range.before) : undefined;
  if (lo && hi && lo.getTime() >= hi.getTime()) return { days: null, edges: [range] };
  const edges: TimeRange[] = [];
  if (range.from && lo && range.from.getTime() < lo.getTime()) edges.push({ from: range.from, before: lo });
  if (range.before && hi && hi.getTime() < range.before.getTime()) edges.push({ from: hi, before: range.before });
  const days: { from?: string; before?: string } = {};
  if (lo) days.from = dayOf(lo);
  if (hi) days.before = dayOf(hi);
  return { days, edges };
}

const HOUR_MS = 3_600_000;

/**
 * How to count a [from, before) range exactly from per-hour counters: the whole UTC hours inside it
 * (`hours`, null when there is none) plus the partial hours at its edges, counted row by row.
 */
export function hourPlan(range: TimeRange): { hours: TimeRange | null; edges: TimeRange[] } {
  const lo = range.from ? new Date(Math.ceil(range.from.getTime() / HOUR_MS) * HOUR_MS) : undefined;
  const hi = range.before ? new Date(Math.floor(range.before.getTime() / HOUR_MS) * HOUR_MS) : undefined;
  if (lo && hi && lo.getTime() >= hi.getTime()) return { hours: null, edges: [range] };
  const edges: TimeRange[] = [];
  if (range.from && lo && range.from.getTime() < lo.getTime()) edges.push({ from: range.from, before: lo });
  if (range.before && hi && hi.getTime() < range.before.getTime()) edges.push({ from: hi, before: range.before });
  const hours: TimeRange = {};
  if (lo) hours.from = lo;
  if (hi) hours.before = hi;
  return { hours, edges };
}

/**
 * The parts a [from, before) range is counted in when a deep numbered page is looked for through
 * the counters, newest first: the partial hour at the top (`top`, counted row by row), whole hours
 * above the whole days (`upperHours`), the whole UTC days (`days`, as dates; each is then told
 * apart by its hours), whole hours below them (`lowerHours`). Calls older than `floor` (the partial
 * hour at the bottom, or nothing when the range is open below) are only reached by walking. Null
 * when the range holds no whole hour.
 */
export function skipPlan(range: TimeRange): {
  top: { from: Date; before: Date } | null;
  upperHours: TimeRange | null;
  days: { from?: string; before?: string } | null;
  lowerHours: TimeRange | null;
  floor: Date | null;
} | null {
  const { hours } = hourPlan(range);
  if (!hours) return null;
  const top =
    range.before && hours.before && hours.before.getTime() < range.before.getTime()
      ? { from: hours.before, before: range.before }
      : null;
  return { top, ...dayPlan(hours), floor: hours.from ?? null };
}

/**
 * Whole UTC hours [from, before) split into the whole UTC days inside them (`days`, as dates; null
 * when there is none) and the hours above and below those days (`upperHours`, `lowerHours`).
 */
export function dayPlan(hours: TimeRange): {
  upperHours: TimeRange | null;
  days: { from?: string; before?: string } | null;
  lowerHours: TimeRange | null;
} {
  const dayOf = (d: Date) => d.toISOString().slice(0, 10);
  const lo = hours.from ? new Date(Math.ceil(hours.from.getTime() / DAY_MS) * DAY_MS) : undefined;
  const hi = hours.before ? new Date(Math.floor(hours.before.getTime() / DAY_MS) * DAY_MS) : undefined;
  if (lo && hi && lo.getTime() >= hi.getTime()) return { upperHours: hours, days: null, lowerHours: null };
  const days: { from?: string; before?: string } = {};
  if (lo) days.from = dayOf(lo);
  if (hi) days.before = dayOf(hi);
  return {
    upperHours: hi && hours.before && hi.getTime() < hours.before.getTime() ? { from: hi, before: hours.before } : null,
    days,
    lowerHours: lo && hours.from && hours.from.getTime() < lo.getTime() ? { from: hours.from, before: lo } : null,
  };
}
