/**
 * Dated exceptions to an agent's weekly schedule: one-off closures and special hours. Pure
 * functions over local dates (`YYYY-MM-DD`) and minutes since local midnight; the zone arithmetic
 * stays in schedule.ts.
 */

/** Hours of an exception day; an end not after the start runs past midnight into the next morning. */
export type ExceptionTimeRule = { start_time: string; end_time: string };

export type ScheduleException = {
  /** One day; or `from`/`to` (both inclusive) for a range of days. */
  date?: string;
  from?: string;
  to?: string;
  /** Closed all day; otherwise `rules` gives the day's hours. */
  closed?: boolean;
  rules?: ExceptionTimeRule[];
  note?: string;
};

export const SCHEDULE_EXCEPTIONS_MAX = 366;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date `YYYY-MM-DD` (no 30 February). */
export function isRealDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** The first and last date an exception covers. */
export function exceptionRange(exception: ScheduleException): { first: string; last: string } {
  const first = exception.date ?? exception.from ?? '';
  return { first, last: exception.date ?? exception.to ?? first };
}

/** The exception covering local `date`, if any (ranges never overlap once validated). */
export function exceptionOn(exceptions: readonly ScheduleException[], date: string): ScheduleException | undefined {
  return exceptions.find((e) => {
    const { first, last } = exceptionRange(e);
    return first <= date && date <= last;
  });
}

function minutesOf(time: string, allowEndOfDay = false): number {
  const [h, m] = time.split(':').map(Number);
  if (allowEndOfDay && h === 24) return 1440;
  return (h ?? 0) * 60 + (m ?? 0);
}

export type ExceptionDecision = { open: boolean; exception: ScheduleException };

/**
 * What the exceptions say about local `date` at `minute` (`previousDate` is the day before):
 * - the previous day's exception hours that run past midnight keep the line open until their end;
 * - otherwise an exception on `date` decides alone: closed, or open only within its hours;
 * - undefined when no exception concerns this moment (holidays and weekly rules decide).
 */
export function exceptionDecision(
  exceptions: readonly ScheduleException[] | undefined,
  date: string,
  previousDate: string,
  minute: number,
): ExceptionDecision | undefined {
  if (!exceptions || exceptions.length === 0) return undefined;
  const previous = exceptionOn(exceptions, previousDate);
  if (previous && !previous.closed) {
    for (const rule of previous.rules ?? []) {
      const start = minutesOf(rule.start_time);
      const end = minutesOf(rule.end_time, true);
      if (end <= start && minute < end) return { open: true, exception: previous };
    }
  }
  const today = exceptionOn(exceptions, date);
  if (!today) return undefined;
  if (today.closed) return { open: false, exception: today };
  const open = (today.rules ?? []).some((rule) => {
    const start = minutesOf(rule.start_time);
    const end = minutesOf(rule.end_time, true);
    return end > start ? minute >= start && minute < end : minute >= start;
  });
  return { open, exception: today };
}

/** Local minutes at which an exception can change the answer (its hours' starts and ends). */
export function exceptionBoundaryMinutes(exceptions: readonly ScheduleException[] | undefined): number[] {
  const minutes: number[] = [];
  for (const e of exceptions ?? []) {
    for (const rule of e.rules ?? []) minutes.push(minutesOf(rule.start_time), minutesOf(rule.end_time, true) % 1440);
  }
  return minutes;
}

function dayNumber(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 86_400_000;
}

/** Validation beyond each entry's shape: ranges in order, at most 366 days each, no two overlapping. */
export function exceptionProblems(exceptions: readonly ScheduleException[]): { index: number; message: string }[] {
  const problems: { index: number; message: string }[] = [];
  const ranges = exceptions.map((e, index) => ({ index, ...exceptionRange(e) }));
  const valid = ranges.filter((r) => {
    if (!isRealDate(r.first) || !isRealDate(r.last)) return false;
    if (r.first > r.last) problems.push({ index: r.index, message: '`from` must not be after `to`' });
    else if (dayNumber(r.last) - dayNumber(r.first) >= SCHEDULE_EXCEPTIONS_MAX)
      problems.push({ index: r.index, message: `A range covers at most ${SCHEDULE_EXCEPTIONS_MAX} days` });
    else return true;
    return false;
  });
  valid.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : a.index - b.index));
  let reach: (typeof valid)[number] | undefined;
  for (const r of valid) {
    if (reach && r.first <= reach.last) {
      problems.push({
        index: Math.max(r.index, reach.index),
        message: `Overlaps exceptions[${Math.min(r.index, reach.index)}]`,
      });
    }
    if (!reach || r.last > reach.last) reach = r;
  }
  return problems.sort((a, b) => a.index - b.index);
}
