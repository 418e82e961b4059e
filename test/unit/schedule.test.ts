import { describe, expect, it } from 'vitest';
import { holidayLookup } from '../../src/modules/agents/holidays.js';
import {
  isWithinSchedule,
  nextScheduleChange,
  parseTime,
  type HolidayLookup,
  type Schedule,
} from '../../src/modules/agents/schedule.js';
import { instantsAt } from '../../src/modules/agents/zoned-time.js';

const noHolidays: HolidayLookup = () => null;
const berlin = (rules: Schedule['rules']): Schedule => ({ timezone: 'Europe/Berlin', rules });
const weekdays = berlin([{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }]);
const within = (s: Schedule, at: string, holidays = noHolidays) => isWithinSchedule(s, holidays, new Date(at));
const next = (s: Schedule, at: string, holidays = noHolidays) =>
  nextScheduleChange(s, holidays, new Date(at))?.toISOString() ?? null;

describe('parseTime', () => {
  it('reads real HH:mm times and 24:00 only as an end', () => {
    expect(parseTime('00:00')).toBe(0);
    expect(parseTime('23:59')).toBe(1439);
    expect(parseTime('24:00')).toBeUndefined();
    expect(parseTime('24:00', true)).toBe(1440);
    expect(parseTime('24:01', true)).toBeUndefined();
    expect(parseTime('12:60')).toBeUndefined();
    expect(parseTime('8:00')).toBeUndefined();
  });
});

describe('isWithinSchedule', () => {
  it('includes the start minute and excludes the end minute (Monday 23 November 2026, CET)', () => {
    expect(within(weekdays, '2026-11-23T06:59:00Z')).toBe(false);
    expect(within(weekdays, '2026-11-23T07:00:00Z')).toBe(true);
    expect(within(weekdays, '2026-11-23T15:59:59Z')).toBe(true);
    expect(within(weekdays, '2026-11-23T16:00:00Z')).toBe(false);
  });

  it('applies the days in the schedule zone, not in UTC', () => {
    // Saturday 00:30 in Berlin is still Friday 23:30 UTC.
    const fridayNight = berlin([{ days: [5], start_time: '20:00', end_time: '24:00' }]);
    expect(within(fridayNight, '2026-11-27T23:30:00Z')).toBe(false);
    expect(within(fridayNight, '2026-11-27T22:59:00Z')).toBe(true);
  });

  it('runs a rule whose end is before its start past midnight into the next day', () => {
    const night = berlin([{ days: [5], start_time: '22:00', end_time: '06:00' }]);
    expect(within(night, '2026-11-27T20:59:00Z')).toBe(false); // Fri 21:59
    expect(within(night, '2026-11-27T21:00:00Z')).toBe(true); // Fri 22:00
    expect(within(night, '2026-11-28T04:59:00Z')).toBe(true); // Sat 05:59
    expect(within(night, '2026-11-28T05:00:00Z')).toBe(false); // Sat 06:00
    expect(within(night, '2026-11-27T01:00:00Z')).toBe(false); // Fri 02:00: Thursday has no rule
  });

  it('treats a rule whose end equals its start as a full 24 hours', () => {
    const allDay = berlin([{ days: [1], start_time: '00:00', end_time: '00:00' }]);
    expect(within(allDay, '2026-11-22T23:00:00Z')).toBe(true); // Mon 00:00
    expect(within(allDay, '2026-11-23T22:59:00Z')).toBe(true); // Mon 23:59
    expect(within(allDay, '2026-11-23T23:00:00Z')).toBe(false); // Tue 00:00
  });

  it('is closed all day on a public holiday of the state, even inside a rule', () => {
    const by = holidayLookup('BY');
    // Thursday 4 June 2026 is Fronleichnam in Bavaria.
    expect(within(weekdays, '2026-06-04T08:00:00Z', by)).toBe(false);
    expect(within(weekdays, '2026-06-04T08:00:00Z', holidayLookup('BE'))).toBe(true);
    expect(within(weekdays, '2026-06-05T08:00:00Z', by)).toBe(true);
  });

  it('never opens a rule that lies in the hour skipped by the spring DST switch (29 March 2026)', () => {
    const skipped = berlin([{ days: [0], start_time: '02:00', end_time: '03:00' }]);
    for (let minute = 0; minute < 24 * 60; minute += 15) {
      expect(within(skipped, new Date(Date.parse('2026-03-28T23:00:00Z') + minute * 60_000).toISOString())).toBe(false);
    }
  });

  it('uses CEST after the spring switch and CET before it', () => {
    const early = berlin([{ days: [0], start_time: '01:00', end_time: '04:00' }]);
    expect(within(early, '2026-03-29T00:30:00Z')).toBe(true); // 01:30 CET
    expect(within(early, '2026-03-29T01:30:00Z')).toBe(true); // 03:30 CEST
    expect(within(early, '2026-03-29T02:00:00Z')).toBe(false); // 04:00 CEST
  });

  it('covers the repeated hour of the autumn DST switch twice (25 October 2026)', () => {
    const repeated = berlin([{ days: [0], start_time: '02:00', end_time: '02:30' }]);
    expect(within(repeated, '2026-10-25T00:00:00Z')).toBe(true); // 02:00 CEST
    expect(within(repeated, '2026-10-25T00:30:00Z')).toBe(false); // 02:30 CEST
    expect(within(repeated, '2026-10-25T01:00:00Z')).toBe(true); // 02:00 CET
    expect(within(repeated, '2026-10-25T01:30:00Z')).toBe(false); // 02:30 CET
  });

  it('evaluates a schedule in another time zone by that zone clock and date', () => {
    const newYork: Schedule = {
      timezone: 'America/New_York',
      rules: [{ days: [1, 2, 3, 4, 5], start_time: '09:00', end_time: '17:00' }],
    };
    expect(within(newYork, '2026-11-23T13:59:00Z')).toBe(false); // 08:59 EST
    expect(within(newYork, '2026-11-23T14:00:00Z')).toBe(true); // 09:00 EST
    expect(within(newYork, '2026-11-23T21:59:00Z')).toBe(true); // 16:59 EST
    // 6 January (Heilige Drei Könige in BY) closes the local 6 January in New York.
    expect(within(newYork, '2026-01-06T15:00:00Z', holidayLookup('BY'))).toBe(false);
    expect(within(newYork, '2026-01-07T15:00:00Z', holidayLookup('BY'))).toBe(true);
  });

  it('is never inside a schedule without rules', () => {
    expect(within(berlin([]), '2026-11-23T10:00:00Z')).toBe(false);
  });
});

describe('nextScheduleChange', () => {
  it('gives the closing time while open and the next opening while closed', () => {
    expect(next(weekdays, '2026-11-23T09:00:00Z')).toBe('2026-11-23T16:00:00.000Z');
    expect(next(weekdays, '2026-11-23T16:00:00Z')).toBe('2026-11-24T07:00:00.000Z');
  });

  it('skips the weekend and a public holiday', () => {
    expect(next(weekdays, '2026-11-27T16:30:00Z')).toBe('2026-11-30T07:00:00.000Z');
    // Wednesday 3 June 2026 after hours; Thursday is Fronleichnam in BY, so Friday opens.
    expect(next(weekdays, '2026-06-03T16:00:00Z', holidayLookup('BY'))).toBe('2026-06-05T06:00:00.000Z');
    expect(next(weekdays, '2026-06-03T16:00:00Z', holidayLookup('BE'))).toBe('2026-06-04T06:00:00.000Z');
  });

  it('finds the end of an overnight rule on the next day', () => {
    const night = berlin([{ days: [5], start_time: '22:00', end_time: '06:00' }]);
    expect(next(night, '2026-11-27T22:00:00Z')).toBe('2026-11-28T05:00:00.000Z');
  });

  it('opens at the DST jump when the opening time does not exist that day', () => {
    const daily = berlin([{ days: [0, 1, 2, 3, 4, 5, 6], start_time: '02:30', end_time: '05:00' }]);
    expect(next(daily, '2026-03-28T20:00:00Z')).toBe('2026-03-29T01:00:00.000Z');
  });

  it('sees the reopening when the clocks fall back into a rule', () => {
    const repeated = berlin([{ days: [0], start_time: '02:00', end_time: '02:30' }]);
    expect(next(repeated, '2026-10-25T00:45:00Z')).toBe('2026-10-25T01:00:00.000Z');
    expect(next(repeated, '2026-10-25T01:00:00Z')).toBe('2026-10-25T01:30:00.000Z');
  });

  it('counts an always-open schedule as closing on the next holiday', () => {
    const always = berlin([{ days: [0, 1, 2, 3, 4, 5, 6], start_time: '00:00', end_time: '24:00' }]);
    expect(next(always, '2026-01-02T12:00:00Z', holidayLookup('BY'))).toBe('2026-01-05T23:00:00.000Z');
    expect(next(always, '2026-01-02T12:00:00Z', holidayLookup('DE'))).toBe('2026-04-02T22:00:00.000Z'); // Karfreitag
  });

  it('is null when the answer never changes', () => {
    expect(next(berlin([]), '2026-11-23T10:00:00Z')).toBeNull();
    const always = berlin([{ days: [0, 1, 2, 3, 4, 5, 6], start_time: '00:00', end_time: '24:00' }]);
    expect(next(always, '2026-11-23T10:00:00Z')).toBeNull();
  });

  it('works in a zone with a half-hour offset', () => {
    const kolkata: Schedule = {
      timezone: 'Asia/Kolkata',
      rules: [{ days: [1], start_time: '09:00', end_time: '18:00' }],
    };
    expect(next(kolkata, '2026-11-23T00:00:00Z')).toBe('2026-11-23T03:30:00.000Z');
  });
});

describe('instantsAt', () => {
  it('returns one instant normally, two in the repeated hour and the jump in the skipped hour', () => {
    expect(instantsAt('Europe/Berlin', '2026-11-23', 8 * 60)).toEqual([Date.parse('2026-11-23T07:00:00Z')]);
    expect(instantsAt('Europe/Berlin', '2026-10-25', 150)).toEqual([
      Date.parse('2026-10-25T00:30:00Z'),
      Date.parse('2026-10-25T01:30:00Z'),
    ]);
    expect(instantsAt('Europe/Berlin', '2026-03-29', 150)).toEqual([Date.parse('2026-03-29T01:00:00Z')]);
  });
});
