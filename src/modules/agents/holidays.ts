import Holidays from 'date-holidays';
import type { Holiday, HolidayLookup } from './schedule.js';

/**
 * German public holidays from the maintained `date-holidays` package. `DE` means the nationwide
 * holidays only; `NRW` is another spelling of `NW` (Nordrhein-Westfalen).
 */
const STATE_ALIASES: Record<string, string> = { NRW: 'NW' };

/** The `date-holidays` state code of a `bundesland`, or undefined for `DE` (nationwide only). */
export function holidayRegion(bundesland: string): string | undefined {
  if (bundesland === 'DE') return undefined;
  return STATE_ALIASES[bundesland] ?? bundesland;
}

const calendars = new Map<string, Holidays>();
const years = new Map<string, Map<string, string>>();

function calendar(region: string | undefined): Holidays {
  const key = region ?? 'DE';
  let hd = calendars.get(key);
  if (!hd) {
    hd = region ? new Holidays('DE', region, { languages: 'de' }) : new Holidays('DE', { languages: 'de' });
    calendars.set(key, hd);
  }
  return hd;
}

/** `date -> name` of the public holidays of one year in one state. */
function publicHolidaysOfYear(region: string | undefined, year: number): Map<string, string> {
  const key = `${region ?? 'DE'}:${year}`;
  let byDate = years.get(key);
  if (!byDate) {
    byDate = new Map();
    for (const h of calendar(region).getHolidays(year)) {
      if (h.type === 'public' && !byDate.has(h.date.slice(0, 10))) byDate.set(h.date.slice(0, 10), h.name);
    }
    years.set(key, byDate);
  }
  return byDate;
}

/** The public holiday of `bundesland` on `date` (`YYYY-MM-DD`), or null. */
export function publicHolidayOn(bundesland: string, date: string): Holiday | null {
  const name = publicHolidaysOfYear(holidayRegion(bundesland), Number(date.slice(0, 4))).get(date);
  return name === undefined ? null : { date, name };
}

/** A lookup bound to one state, as `isWithinSchedule` takes it. */
export function holidayLookup(bundesland: string): HolidayLookup {
  return (date) => publicHolidayOn(bundesland, date);
}
