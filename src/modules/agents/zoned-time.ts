/**
 * Wall-clock arithmetic in IANA time zones with nothing but Intl: what a clock in a zone shows at
 * an instant, and which instants show a given wall-clock time (none in a DST gap, two in an overlap).
 */

export type ZonedParts = {
  /** `YYYY-MM-DD` in the zone. */
  date: string;
  /** 0 = Sunday ... 6 = Saturday. */
  weekday: number;
  /** Minutes since local midnight, 0..1439. */
  minute: number;
  /** The wall-clock time as if it were UTC, in ms (to compare wall-clock times across days). */
  wallMs: number;
};

const MINUTE = 60_000;
const DAY = 86_400_000;
const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** True for a zone name the runtime's time-zone database knows (`Europe/Berlin`, `UTC`). */
export function isValidTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  // Newer ICU (Node 24) also accepts UTC offsets such as "+01:00"; a schedule needs a named zone,
  // whose offset follows daylight saving time.
  if (/^[+-]/.test(zone)) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Answers by zone and minute, so that status, simulations and test runs, which look at the same
 * boundaries again and again, ask Intl (slow next to a map lookup) once. Bounded: emptied when full.
 */
const partsCache = new Map<string, Map<number, ZonedParts>>();
let cachedParts = 0;
const PARTS_CACHE_MAX = 200_000;

export function zonedParts(zone: string, at: Date | number): ZonedParts {
  const minuteMs = Math.floor(+at / MINUTE) * MINUTE;
  let byMinute = partsCache.get(zone);
  const hit = byMinute?.get(minuteMs);
  if (hit) return hit;
  const parts = Object.freeze(computeZonedParts(zone, minuteMs));
  if (cachedParts >= PARTS_CACHE_MAX) {
    partsCache.clear();
    cachedParts = 0;
    byMinute = undefined;
  }
  if (!byMinute) partsCache.set(zone, (byMinute = new Map()));
  byMinute.set(minuteMs, parts);
  cachedParts++;
  return parts;
}

function computeZonedParts(zone: string, at: number): ZonedParts {
  const values: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(at)) values[part.type] = part.value;
  const year = Number(values.year);
  const month = Number(values.month);
  const day = Number(values.day);
  const hour = Number(values.hour);
  const minute = Number(values.minute);
  return {
    date: `${values.year}-${values.month}-${values.day}`,
    weekday: WEEKDAYS[values.weekday!]!,
    minute: hour * 60 + minute,
    wallMs: Date.UTC(year, month - 1, day, hour, minute),
  };
}

/** `YYYY-MM-DD` plus `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

/** Local minutes of the zone minus UTC at `at` (Berlin in summer: 120). */
function offsetMinutes(zone: string, at: number): number {
  const floored = Math.floor(at / MINUTE) * MINUTE;
  return (zonedParts(zone, floored).wallMs - floored) / MINUTE;
}

/**
 * The instants at which the zone's clock turns to `date` + `minute`: one normally, two when the
 * clocks fall back, and in a DST gap the instant the clock jumps over it (the first instant whose
 * wall-clock time is later).
 */
export function instantsAt(zone: string, date: string, minute: number): number[] {
  const wall = Date.parse(`${date}T00:00:00Z`) + minute * MINUTE;
  const offsets = new Set([offsetMinutes(zone, wall - DAY), offsetMinutes(zone, wall + DAY)]);
  const candidates = [...offsets].map((o) => wall - o * MINUTE).sort((a, b) => a - b);
  const exact = candidates.filter((t) => zonedParts(zone, t).wallMs === wall);
  if (exact.length > 0) return exact;
  let low = candidates[0]!;
  let high = candidates[candidates.length - 1]!;
  while (high - low > MINUTE) {
    const mid = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
    if (zonedParts(zone, mid).wallMs >= wall) high = mid;
    else low = mid;
  }
  return [high];
}

/** Instants during local `date` at which the zone's UTC offset changes (DST switches). */
export function offsetChangesOn(zone: string, date: string): number[] {
  const start = Date.parse(`${date}T00:00:00Z`) - 14 * 60 * MINUTE;
  const end = start + DAY + 28 * 60 * MINUTE;
  if (offsetMinutes(zone, start) === offsetMinutes(zone, end)) return [];
  const before = offsetMinutes(zone, start);
  let low = start;
  let high = end;
  while (high - low > MINUTE) {
    const mid = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
    if (offsetMinutes(zone, mid) === before) low = mid;
    else high = mid;
  }
  return zonedParts(zone, high).date === date ? [high] : [];
}
