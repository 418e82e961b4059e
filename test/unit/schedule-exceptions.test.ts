import { describe, expect, it } from 'vitest';
import { holidayLookup } from '../../src/modules/agents/holidays.js';
import {
  exceptionDecision,
  exceptionProblems,
  isRealDate,
  type ScheduleException,
} from '../../src/modules/agents/schedule-exceptions.js';
import { nextScheduleChange, scheduleDecision, type Schedule } from '../../src/modules/agents/schedule.js';

const weekdays = [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }];
const berlin = (exceptions: ScheduleException[], rules = weekdays): Schedule => ({
  timezone: 'Europe/Berlin',
  rules,
  exceptions,
});
const decide = (s: Schedule, at: string, holidays = holidayLookup('BY')) => {
  const d = scheduleDecision(s, holidays, new Date(at));
  return [d.open, d.reason, d.exception?.note ?? null];
};
const next = (s: Schedule, at: string, holidays = holidayLookup('BY')) =>
  nextScheduleChange(s, holidays, new Date(at))?.toISOString() ?? null;

describe('exceptionDecision (local dates and minutes)', () => {
  const party: ScheduleException = { date: '2026-12-04', closed: true, note: 'Company party' };
  const halfDay: ScheduleException = { date: '2026-12-24', rules: [{ start_time: '08:00', end_time: '12:00' }] };
  const lateNight: ScheduleException = { date: '2026-12-31', rules: [{ start_time: '18:00', end_time: '02:00' }] };

  it('says nothing on a day without an exception', () => {
    expect(exceptionDecision([party], '2026-12-03', '2026-12-02', 600)).toBeUndefined();
    expect(exceptionDecision(undefined, '2026-12-03', '2026-12-02', 600)).toBeUndefined();
  });

  it('closes a closed day and opens special hours only within them', () => {
    expect(exceptionDecision([party], '2026-12-04', '2026-12-03', 600)).toEqual({ open: false, exception: party });
    expect(exceptionDecision([halfDay], '2026-12-24', '2026-12-23', 479)?.open).toBe(false);
    expect(exceptionDecision([halfDay], '2026-12-24', '2026-12-23', 480)?.open).toBe(true);
    expect(exceptionDecision([halfDay], '2026-12-24', '2026-12-23', 720)?.open).toBe(false);
  });

  it('keeps hours that cross midnight open into the next morning, even over that day', () => {
    expect(exceptionDecision([lateNight], '2026-12-31', '2026-12-30', 1200)?.open).toBe(true);
    expect(exceptionDecision([lateNight], '2027-01-01', '2026-12-31', 60)).toEqual({
      open: true,
      exception: lateNight,
    });
    expect(exceptionDecision([lateNight], '2027-01-01', '2026-12-31', 120)).toBeUndefined();
    const closedNewYear: ScheduleException = { date: '2027-01-01', closed: true };
    expect(exceptionDecision([lateNight, closedNewYear], '2027-01-01', '2026-12-31', 60)?.open).toBe(true);
    expect(exceptionDecision([lateNight, closedNewYear], '2027-01-01', '2026-12-31', 120)?.open).toBe(false);
  });

  it('covers every day of a from/to range, both ends included', () => {
    const bridge: ScheduleException = { from: '2026-12-28', to: '2026-12-30', closed: true };
    expect(exceptionDecision([bridge], '2026-12-27', '2026-12-26', 600)).toBeUndefined();
    expect(exceptionDecision([bridge], '2026-12-28', '2026-12-27', 600)?.open).toBe(false);
    expect(exceptionDecision([bridge], '2026-12-30', '2026-12-29', 600)?.open).toBe(false);
    expect(exceptionDecision([bridge], '2026-12-31', '2026-12-30', 600)).toBeUndefined();
  });
});

describe('scheduleDecision: exception, then holiday, then weekly rules', () => {
  it('opens on a public holiday when an exception gives hours (Christmas Day 2026, Bavaria)', () => {
    const s = berlin([{ date: '2026-12-25', rules: [{ start_time: '10:00', end_time: '14:00' }], note: 'Hotline' }]);
    expect(decide(s, '2026-12-25T10:00:00Z')).toEqual([true, 'exception', 'Hotline']);
    expect(decide(s, '2026-12-25T14:00:00Z')).toEqual([false, 'exception', 'Hotline']);
    // Boxing Day has no exception: the holiday closes it.
    expect(decide(s, '2026-12-26T10:00:00Z')).toEqual([false, 'holiday', null]);
    // A normal Monday: the weekly rules.
    expect(decide(s, '2026-12-28T10:00:00Z')).toEqual([true, 'schedule', null]);
  });

  it('closes a weekday and says when it opens again across the exception', () => {
    const s = berlin([{ date: '2026-12-04', closed: true, note: 'Party' }]);
    // Thursday 3 December 16:00 local: closes at 17:00, the Friday stays closed, opens Monday 08:00.
    expect(decide(s, '2026-12-03T15:00:00Z')).toEqual([true, 'schedule', null]);
    expect(next(s, '2026-12-03T15:00:00Z')).toBe('2026-12-03T16:00:00.000Z');
    expect(next(s, '2026-12-03T16:00:00Z')).toBe('2026-12-07T07:00:00.000Z');
    expect(decide(s, '2026-12-04T09:00:00Z')).toEqual([false, 'exception', 'Party']);
  });

  it('finds the change at the end of hours that cross midnight', () => {
    const s = berlin([{ date: '2026-12-31', rules: [{ start_time: '18:00', end_time: '02:00' }] }]);
    expect(next(s, '2026-12-31T12:00:00Z')).toBe('2026-12-31T17:00:00.000Z');
    expect(decide(s, '2027-01-01T00:30:00Z')[0]).toBe(true);
    // 1 January is a holiday: after 02:00 local it stays closed until Monday... the next weekday, 2 January is a Saturday.
    expect(next(s, '2027-01-01T00:30:00Z')).toBe('2027-01-01T01:00:00.000Z');
    expect(next(s, '2027-01-01T01:00:00Z')).toBe('2027-01-04T07:00:00.000Z');
  });

  it('handles special hours on a DST day (29 March 2026, clocks jump from 02:00 to 03:00)', () => {
    const s = berlin([{ date: '2026-03-29', rules: [{ start_time: '01:00', end_time: '04:00' }] }]);
    // 01:00 CET = 00:00Z opens; 04:00 CEST = 02:00Z closes: two hours of wall time skipped by one.
    expect(next(s, '2026-03-28T23:30:00Z')).toBe('2026-03-29T00:00:00.000Z');
    expect(decide(s, '2026-03-29T01:30:00Z')).toEqual([true, 'exception', null]);
    expect(next(s, '2026-03-29T00:00:00Z')).toBe('2026-03-29T02:00:00.000Z');
  });

  it('is unchanged by an empty exception list', () => {
    expect(decide(berlin([]), '2026-12-04T09:00:00Z')).toEqual([true, 'schedule', null]);
  });
});

describe('exceptionProblems and isRealDate', () => {
  it('refuses overlaps (also a range hiding several later ones), reversed and over-long ranges', () => {
    expect(
      exceptionProblems([
        { from: '2026-12-01', to: '2026-12-10', closed: true },
        { date: '2026-12-03', closed: true },
        { date: '2026-12-08', closed: true },
        { date: '2026-12-11', closed: true },
        { from: '2026-12-20', to: '2026-12-19', closed: true },
        { from: '2027-01-01', to: '2028-01-02', closed: true },
      ]),
    ).toEqual([
      { index: 1, message: 'Overlaps exceptions[0]' },
      { index: 2, message: 'Overlaps exceptions[0]' },
      { index: 4, message: '`from` must not be after `to`' },
      { index: 5, message: 'A range covers at most 366 days' },
    ]);
    expect(exceptionProblems([{ from: '2028-01-01', to: '2028-12-31', closed: true }])).toEqual([]);
  });

  it('knows real dates', () => {
    expect(isRealDate('2028-02-29')).toBe(true);
    expect(isRealDate('2026-02-29')).toBe(false);
    expect(isRealDate('2026-13-01')).toBe(false);
    expect(isRealDate('2026-1-01')).toBe(false);
  });
});
