import { DEFAULT_TIME_ZONE } from '../agents/agent-status.js';
import { publicHolidayOn } from '../agents/holidays.js';
import { exceptionRange, type ScheduleException } from '../agents/schedule-exceptions.js';
import { ruleCovers, type Schedule } from '../agents/schedule.js';
import { addDays, instantsAt, zonedParts } from '../agents/zoned-time.js';

/** A moment worth pinning: its name, and the local date and minute in the agent's zone. */
export type SuggestedMoment = { name: string; at: string; kind: MomentKind };
export type MomentKind = 'weekday_open' | 'weekday_closed' | 'weekend' | 'holiday' | 'fixed' | 'exception' | 'night';

const HOUR = 60;

/** `YYYY-MM-DDTHH:mm:00+01:00`: the local wall time with its offset, as an owner would write it. */
export function localMoment(zone: string, date: string, minute: number): string {
  const instant = instantsAt(zone, date, minute)[0] ?? instantsAt(zone, date, minute + HOUR)[0]!;
  const parts = zonedParts(zone, instant);
  const offset = Math.round((parts.wallMs - instant) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(Math.floor(parts.minute / 60))}:${pad(parts.minute % 60)}`;
  return `${parts.date}T${time}:00${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}

function weekdayOf(date: string): number {
  return new Date(`${date}T12:00:00Z`).getUTCDay();
}

/** The first date from `start` (inclusive) within `days` for which `test` holds. */
function firstDate(start: string, days: number, test: (date: string) => boolean): string | undefined {
  for (let i = 0; i < days; i++) {
    const date = addDays(start, i);
    if (test(date)) return date;
  }
  return undefined;
}

/** A weekday minute inside the weekly hours (an hour after a rule starts), or 10:00 without rules. */
function openMinute(schedule: Schedule | null, weekday: number): number | undefined {
  if (!schedule) return 10 * HOUR;
  const candidates = schedule.rules
    .filter((r) => r.days.includes(weekday))
    .map((r) => Number(r.start_time.slice(0, 2)) * HOUR + Number(r.start_time.slice(3, 5)) + HOUR);
  return candidates.find((m) => m < 24 * HOUR && schedule.rules.some((r) => ruleCovers(r, weekday, m)));
}

/** A weekday minute outside the weekly hours (evening first), or 20:00 when the line never closes. */
function closedMinute(schedule: Schedule | null, weekday: number): number {
  const tries = [20 * HOUR, 22 * HOUR, 6 * HOUR, 12 * HOUR + 30];
  return tries.find((m) => schedule !== null && !schedule.rules.some((r) => ruleCovers(r, weekday, m))) ?? 20 * HOUR;
}

function nextOnOrAfter(today: string, monthDay: string): string {
  const thisYear = `${today.slice(0, 4)}-${monthDay}`;
  return thisYear >= today ? thisYear : `${Number(today.slice(0, 4)) + 1}-${monthDay}`;
}

/** Monday to Friday, no public holiday, and not 24 or 31 December (they have moments of their own). */
function isWorkday(date: string, bundesland: string): boolean {
  const day = weekdayOf(date);
  const yearEnd = date.endsWith('-12-24') || date.endsWith('-12-31');
  return day >= 1 && day <= 5 && !yearEnd && publicHolidayOn(bundesland, date) === null;
}

/**
 * The moments that matter for a German business, from tomorrow on: a weekday inside and outside the
 * hours, Saturday and Sunday, the next public holiday of the agent's state, 24 and 31 December, the
 * next schedule exception, and a night call. Dates with an exception or holiday are skipped where
 * they would blur what a moment is meant to pin.
 */
export function suggestedMoments(
  agent: { schedule: Schedule | null; bundesland: string },
  now: Date,
): SuggestedMoment[] {
  const zone = agent.schedule?.timezone ?? DEFAULT_TIME_ZONE;
  const today = zonedParts(zone, now).date;
  const tomorrow = addDays(today, 1);
  const exceptions = agent.schedule?.exceptions ?? [];
  const plain = (date: string) =>
    !exceptions.some((e) => covers(e, date)) && publicHolidayOn(agent.bundesland, date) === null;
  const moments: SuggestedMoment[] = [];
  const push = (name: string, date: string | undefined, minute: number | undefined, kind: MomentKind) => {
    if (date !== undefined && minute !== undefined) moments.push({ name, at: localMoment(zone, date, minute), kind });
  };

  const workday =
    firstDate(
      tomorrow,
      28,
      (d) => isWorkday(d, agent.bundesland) && plain(d) && openMinute(agent.schedule, weekdayOf(d)) !== undefined,
    ) ?? firstDate(tomorrow, 28, (d) => isWorkday(d, agent.bundesland) && plain(d));
  if (workday) {
    const open = openMinute(agent.schedule, weekdayOf(workday));
    push(
      `Werktag ${formatMinute(open ?? 10 * HOUR)}${agent.schedule ? ': innerhalb der Öffnungszeiten' : ''}`,
      workday,
      open ?? 10 * HOUR,
      'weekday_open',
    );
    const closed = closedMinute(agent.schedule, weekdayOf(workday));
    // Without a schedule the line never closes: the evening moment pins that.
    const label = agent.schedule ? ': außerhalb der Öffnungszeiten' : '';
    push(`Werktag ${formatMinute(closed)}${label}`, workday, closed, 'weekday_closed');
  }
  push(
    'Samstag 11:00',
    firstDate(tomorrow, 14, (d) => weekdayOf(d) === 6 && plain(d)),
    11 * HOUR,
    'weekend',
  );
  push(
    'Sonntag 11:00',
    firstDate(tomorrow, 14, (d) => weekdayOf(d) === 0 && plain(d)),
    11 * HOUR,
    'weekend',
  );
  const holiday = firstDate(tomorrow, 400, (d) => publicHolidayOn(agent.bundesland, d) !== null);
  if (holiday)
    push(`Feiertag: ${publicHolidayOn(agent.bundesland, holiday)!.name} 11:00`, holiday, 11 * HOUR, 'holiday');
  push('Heiligabend 19:30', nextOnOrAfter(tomorrow, '12-24'), 19 * HOUR + 30, 'fixed');
  push('Silvester 15:00', nextOnOrAfter(tomorrow, '12-31'), 15 * HOUR, 'fixed');
  const exception = nextException(exceptions, tomorrow);
  if (exception) push(`Ausnahme: ${exception.label} 12:00`, exception.date, 12 * HOUR, 'exception');
  push('Nachtanruf 03:00', firstDate(tomorrow, 14, plain) ?? tomorrow, 3 * HOUR, 'night');
  return moments;
}

function covers(e: ScheduleException, date: string): boolean {
  const { first, last } = exceptionRange(e);
  return first <= date && date <= last;
}

/** The first day from `from` on that an exception covers, with a label (its note, else its dates). */
function nextException(
  exceptions: readonly ScheduleException[],
  from: string,
): { date: string; label: string } | undefined {
  const upcoming = exceptions
    .map((e) => ({ e, ...exceptionRange(e) }))
    .filter((r) => r.last >= from)
    .sort((a, b) => (a.first < b.first ? -1 : 1))[0];
  if (!upcoming) return undefined;
  const date = upcoming.first >= from ? upcoming.first : from;
  const label =
    upcoming.e.note ?? (upcoming.first === upcoming.last ? upcoming.first : `${upcoming.first} bis ${upcoming.last}`);
  return { date, label };
}

function formatMinute(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}
