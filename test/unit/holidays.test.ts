import FullHolidays from 'date-holidays';
import { describe, expect, it } from 'vitest';
import { BUNDESLAENDER } from '../../src/modules/agents/agent.schemas.js';
import { holidayRegion, publicHolidayOn } from '../../src/modules/agents/holidays.js';
import { addDays } from '../../src/modules/agents/zoned-time.js';

describe('publicHolidayOn', () => {
  it('has Fronleichnam in Bavaria but not in Berlin', () => {
    expect(publicHolidayOn('BY', '2026-06-04')).toEqual({ date: '2026-06-04', name: 'Fronleichnam' });
    expect(publicHolidayOn('BE', '2026-06-04')).toBeNull();
  });

  it('has Reformationstag in Saxony but not in Bavaria or nationwide', () => {
    expect(publicHolidayOn('SN', '2026-10-31')).toEqual({ date: '2026-10-31', name: 'Reformationstag' });
    expect(publicHolidayOn('BY', '2026-10-31')).toBeNull();
    expect(publicHolidayOn('DE', '2026-10-31')).toBeNull();
  });

  it('treats NW and NRW as the same state on every day of a year', () => {
    expect(holidayRegion('NRW')).toBe('NW');
    let day = '2026-01-01';
    for (let i = 0; i < 365; i++, day = addDays(day, 1)) {
      expect(publicHolidayOn('NRW', day)).toEqual(publicHolidayOn('NW', day));
    }
    expect(publicHolidayOn('NRW', '2026-11-01')).toEqual({ date: '2026-11-01', name: 'Allerheiligen' });
  });

  it('has only nationwide holidays for DE', () => {
    expect(publicHolidayOn('DE', '2026-01-01')?.name).toBe('Neujahr');
    expect(publicHolidayOn('DE', '2026-10-03')?.name).toBe('Tag der Deutschen Einheit');
    expect(publicHolidayOn('DE', '2026-01-06')).toBeNull();
    expect(publicHolidayOn('BY', '2026-01-06')?.name).toBe('Heilige Drei Könige');
  });

  it('has the state-only holidays of Saxony, Berlin and Thuringia', () => {
    expect(publicHolidayOn('SN', '2026-11-18')?.name).toBe('Buß- und Bettag');
    expect(publicHolidayOn('BE', '2026-03-08')?.name).toBe('Internationaler Frauentag');
    expect(publicHolidayOn('TH', '2026-09-20')?.name).toBe('Weltkindertag');
  });

  it('moves with Easter from year to year', () => {
    expect(publicHolidayOn('DE', '2027-03-26')?.name).toBe('Karfreitag');
    expect(publicHolidayOn('DE', '2026-04-03')?.name).toBe('Karfreitag');
  });

  it('ignores days that are not public holidays (Heiligabend, Rosenmontag)', () => {
    expect(publicHolidayOn('NW', '2026-12-24')).toBeNull();
    expect(publicHolidayOn('NW', '2026-02-16')).toBeNull();
  });

  it.each(BUNDESLAENDER)('knows New Year in %s', (state) => {
    expect(publicHolidayOn(state, '2027-01-01')?.name).toBe('Neujahr');
  });

  it.each(BUNDESLAENDER)('matches the whole date-holidays package for %s, 2024 to 2032', (state) => {
    // Only Germany's rules are loaded; the package with every country's must agree on every day.
    const region = holidayRegion(state);
    const full = region
      ? new FullHolidays('DE', region, { languages: 'de' })
      : new FullHolidays('DE', { languages: 'de' });
    for (let year = 2024; year <= 2032; year++) {
      const expected = full.getHolidays(year).filter((h) => h.type === 'public');
      for (let day = `${year}-01-01`; day.startsWith(String(year)); day = addDays(day, 1)) {
        const want = expected.find((h) => h.date.slice(0, 10) === day);
        expect(publicHolidayOn(state, day)).toEqual(want ? { date: day, name: want.name } : null);
      }
    }
  });
});
