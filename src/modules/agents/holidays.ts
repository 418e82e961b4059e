import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Holidays from 'date-holidays-parser';
import type { Holiday, HolidayLookup } from './schedule.js';

const require = createRequire(import.meta.url);

/**
 * German public holidays from the maintained `date-holidays` package. `DE` means the nationwide
 * holidays only; `NRW` is another spelling of `NW` (Nordrhein-Westfalen).
 *
 * Only Germany's rules are kept: importing `date-holidays` itself keeps every country's (several
 * megabytes of heap for the life of the process). Its rules file is read once, on the first holiday
 * asked for, Germany's part and the shared names are kept, the rest is garbage; its own parser
 * (`date-holidays-parser`, what `date-holidays` wraps) works on that part. The parser too is loaded
 * then (its CommonJS build, synchronously): with moment-timezone and its calendars it holds megabytes
 * of heap, which an instance that is never asked about a holiday does not need.
 */
const STATE_ALIASES: Record<string, string> = { NRW: 'NW' };

/** The `date-holidays` state code of a `bundesland`, or undefined for `DE` (nationwide only). */
export function holidayRegion(bundesland: string): string | undefined {
  if (bundesland === 'DE') return undefined;
  return STATE_ALIASES[bundesland] ?? bundesland;
}

type HolidayData = { version: string; license: string; holidays: Record<string, unknown>; names: unknown };

let germany: HolidayData | undefined;

function germanRules(): HolidayData {
  if (!germany) {
    const dir = path.dirname(require.resolve('date-holidays/package.json'));
    const all = JSON.parse(readFileSync(path.join(dir, 'data', 'holidays.json'), 'utf8')) as HolidayData;
    germany = { version: all.version, license: all.license, holidays: { DE: all.holidays.DE }, names: all.names };
  }
  return germany;
}

const calendars = new Map<string, Holidays>();
const years = new Map<string, Map<string, string>>();

function calendar(region: string | undefined): Holidays {
  const key = region ?? 'DE';
  let hd = calendars.get(key);
  if (!hd) {
    const data = germanRules();
    const Parser = (require('date-holidays-parser') as { default: typeof Holidays }).default;
    hd = region ? new Parser(data, 'DE', region, { languages: 'de' }) : new Parser(data, 'DE', { languages: 'de' });
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
