import Holidays from 'date-holidays';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holidayLookup } from '../../src/modules/agents/holidays.js';
import {
  isAllowed,
  nextAllowed,
  nextInstant,
  type CallingWindow,
  type WindowRules,
} from '../../src/modules/outbound/calling-window.js';

/**
 * A year of minutes against an oracle written apart from the code under test: local time from the
 * zone's offset per UTC hour (German DST switches fall on whole UTC hours), public holidays from the
 * `date-holidays` package itself, and the rules as the issue states them. Every minute the code
 * allows, the oracle allows (no job is handed out outside its window), and the reverse; and
 * `nextAllowed` from any minute is the oracle's first allowed minute.
 */

const YEAR = 2027;
const MINUTE = 60_000;
const ZONE = 'Europe/Berlin';
const START = Date.UTC(YEAR, 0, 1) - 60 * MINUTE;
const MINUTES = (Date.UTC(YEAR + 1, 0, 1) - START) / MINUTE;

const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, timeZoneName: 'longOffset' });
function offsetMinutesAt(utcMs: number): number {
  const name = offsetFormat.formatToParts(utcMs).find((p) => p.type === 'timeZoneName')!.value; // GMT+01:00
  const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
}

/** Local date, weekday and minute of every minute of the year (computed once). */
const local = (() => {
  const dates: string[] = new Array(MINUTES);
  const weekdays = new Uint8Array(MINUTES);
  const minutes = new Uint16Array(MINUTES);
  let offset = 0;
  for (let m = 0; m < MINUTES; m++) {
    const utc = START + m * MINUTE;
    if (m % 60 === 0) offset = offsetMinutesAt(utc);
    const wall = new Date(utc + offset * MINUTE);
    dates[m] = wall.toISOString().slice(0, 10);
    weekdays[m] = wall.getUTCDay();
    minutes[m] = wall.getUTCHours() * 60 + wall.getUTCMinutes();
  }
  return { dates, weekdays, minutes };
})();

const publicHolidays = new Map<string, Set<string>>();
function holidaysOf(state: string): Set<string> {
  let set = publicHolidays.get(state);
  if (!set) {
    const hd = new Holidays('DE', state);
    set = new Set<string>();
    for (const year of [YEAR - 1, YEAR, YEAR + 1])
      for (const h of hd.getHolidays(year)) if (h.type === 'public') set.add(h.date.slice(0, 10));
    publicHolidays.set(state, set);
  }
  return set;
}

const hhmm = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

type Case = {
  state: string;
  window: { days: number[]; from: number; to: number };
  opening: { days: number[]; from: number; to: number }[] | null;
  closedDays: number[];
  specialDays: { day: number; from: number; to: number }[];
  vacationUntil: number | null;
  notBefore: number | null;
  notAfter: number | null;
};

const span = fc
  .tuple(fc.integer({ min: 0, max: 95 }), fc.integer({ min: 1, max: 96 }))
  .filter(([a, b]) => a < b)
  .map(([a, b]) => ({ from: a * 15, to: b * 15 }));
const days = fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 });
const dayOfYear = fc.integer({ min: 0, max: 364 });
const instant = fc.integer({ min: 0, max: MINUTES - 1 });

const cases = fc.record<Case>({
  state: fc.constantFrom('BY', 'NW', 'BE', 'SN', 'BW', 'HH', 'TH', 'SL'),
  window: fc.tuple(days, span).map(([d, s]) => ({ days: d, ...s })),
  opening: fc.option(
    fc.array(
      fc.tuple(days, span).map(([d, s]) => ({ days: d, ...s })),
      { minLength: 1, maxLength: 2 },
    ),
    {
      nil: null,
    },
  ),
  closedDays: fc.uniqueArray(dayOfYear, { maxLength: 5 }),
  specialDays: fc.array(
    fc.tuple(dayOfYear, span).map(([day, s]) => ({ day, ...s })),
    { maxLength: 3 },
  ),
  vacationUntil: fc.option(instant, { nil: null }),
  notBefore: fc.option(instant, { nil: null }),
  notAfter: fc.option(instant, { nil: null }),
});

const dateOfDay = (day: number) => new Date(Date.UTC(YEAR, 0, 1 + day)).toISOString().slice(0, 10);

function rulesOf(c: Case): WindowRules {
  const closed = new Set(c.closedDays.map(dateOfDay));
  // One exception per date: a closed day wins over special hours on the same date.
  const special = c.specialDays.filter((s) => !closed.has(dateOfDay(s.day)));
  const seen = new Set<string>();
  const exceptions = [
    ...[...closed].map((date) => ({ date, closed: true })),
    ...special
      .filter((s) => !seen.has(dateOfDay(s.day)) && seen.add(dateOfDay(s.day)))
      .map((s) => ({ date: dateOfDay(s.day), rules: [{ start_time: hhmm(s.from), end_time: hhmm(s.to) }] })),
  ];
  const window: CallingWindow = { days: c.window.days, from: hhmm(c.window.from), to: hhmm(c.window.to) };
  return {
    timezone: ZONE,
    window,
    openingHours: c.opening
      ? c.opening.map((o) => ({ days: o.days, start_time: hhmm(o.from), end_time: hhmm(o.to) }))
      : null,
    exceptions,
    holidayOn: holidayLookup(c.state),
    vacationUntil: c.vacationUntil === null ? null : START + c.vacationUntil * MINUTE,
    notBefore: c.notBefore === null ? null : START + c.notBefore * MINUTE,
    notAfter: c.notAfter === null ? null : START + c.notAfter * MINUTE,
  };
}

/** The oracle: allowed[m] for every minute of the year. */
function oracle(c: Case, rules: WindowRules): Uint8Array {
  const holidays = holidaysOf(c.state);
  const exceptionByDate = new Map(rules.exceptions.map((e) => [e.date!, e]));
  const allowed = new Uint8Array(MINUTES);
  for (let m = 0; m < MINUTES; m++) {
    const utc = START + m * MINUTE;
    if (rules.notBefore !== null && utc < rules.notBefore) continue;
    if (rules.notAfter !== null && utc > rules.notAfter) continue;
    if (rules.vacationUntil !== null && utc < rules.vacationUntil) continue;
    const date = local.dates[m]!;
    const weekday = local.weekdays[m]!;
    const minute = local.minutes[m]!;
    if (weekday === 0 || holidays.has(date)) continue;
    if (!c.window.days.includes(weekday) || minute < c.window.from || minute >= c.window.to) continue;
    const exception = exceptionByDate.get(date);
    if (exception?.closed) continue;
    if (exception?.rules) {
      const rule = exception.rules[0]!;
      const start = Number(rule.start_time.slice(0, 2)) * 60 + Number(rule.start_time.slice(3));
      const end = Number(rule.end_time.slice(0, 2)) * 60 + Number(rule.end_time.slice(3));
      if (minute < start || minute >= end) continue;
    } else if (c.opening && !c.opening.some((o) => o.days.includes(weekday) && minute >= o.from && minute < o.to)) {
      continue;
    }
    allowed[m] = 1;
  }
  return allowed;
}

describe('calling windows over a year of minutes', () => {
  it('hand out exactly the minutes the rules allow, next_attempt_at being the first of them (several Bundeslaender)', () => {
    fc.assert(
      fc.property(cases, fc.array(instant, { minLength: 20, maxLength: 20 }), (c, probes) => {
        const rules = rulesOf(c);
        const allowed = oracle(c, rules);
        const end = START + MINUTES * MINUTE;
        // The code's allowed periods over the year: from each period's end, the next allowed moment.
        const covered = new Uint8Array(MINUTES);
        let from: number | null = START;
        while (from !== null && from < end) {
          const at = nextInstant(rules, from, true);
          if (at === null || at >= end) break;
          const until = nextInstant(rules, at, false) ?? end;
          for (let t = at; t < Math.min(until, end); t += MINUTE) covered[(t - START) / MINUTE] = 1;
          from = until;
        }
        // Every minute of the year: handed out by the code iff the oracle allows it.
        for (let m = 0; m < MINUTES; m++) {
          if (covered[m] !== allowed[m])
            throw new Error(`${new Date(START + m * MINUTE).toISOString()}: code ${covered[m]}, oracle ${allowed[m]}`);
        }
        // next_attempt_at from any moment is the first allowed minute; the claim's check agrees.
        const next = new Int32Array(MINUTES + 1).fill(-1);
        for (let m = MINUTES - 1; m >= 0; m--) next[m] = allowed[m] ? m : next[m + 1]!;
        for (const m of probes) {
          expect(isAllowed(rules, START + m * MINUTE)).toBe(allowed[m] === 1);
          const planned = nextAllowed(rules, START + m * MINUTE);
          if (next[m] !== -1) expect(planned).toBe(START + next[m]! * MINUTE);
          else expect(planned === null || planned >= end).toBe(true);
        }
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});
