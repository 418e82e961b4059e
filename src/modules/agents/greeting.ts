import { parseTime } from './schedule.js';
import { zonedParts } from './zoned-time.js';

/** Greeting variants compare their time windows in this zone (spec). */
export const GREETING_TIME_ZONE = 'Europe/Berlin';

export type GreetingVariant = {
  greeting: string;
  tag?: string;
  from?: string;
  to?: string;
  min_calls_today?: number;
};

export type GreetingContact = {
  first_name: string | null;
  last_name: string | null;
  salutation: string | null;
  tags: string[];
};

export type GreetingCaller = {
  contact: GreetingContact | null;
  callsToday: number;
  /** Pre-call variables; the contact's names fill `{{vorname}}`, `{{nachname}}`, `{{anrede}}`. */
  variables: Record<string, string>;
  at: Date;
};

export type VariantVerdict = { index: number; matched: boolean; reasons: string[] };

export type GreetingChoice = {
  greeting: string | null;
  source: 'variant' | 'default' | 'none';
  variant_index: number | null;
  /** `HH:mm` in Europe/Berlin, as the windows were compared. */
  local_time: string;
  /** Every variant, in order, with why it did or did not match. */
  variants: VariantVerdict[];
  /** Placeholders of the spoken default greeting that had no value (left out). */
  missing_placeholders: string[];
};

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;

export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** Placeholder values: variables first, then the contact's non-empty name parts on top. */
export function placeholderValues(caller: Pick<GreetingCaller, 'contact' | 'variables'>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(caller.variables)) if (v.trim() !== '') values[k] = v;
  const c = caller.contact;
  const fromContact: [string, string | null | undefined][] = [
    ['vorname', c?.first_name],
    ['nachname', c?.last_name],
    ['anrede', c?.salutation],
  ];
  for (const [k, v] of fromContact) if (v && v.trim() !== '') values[k] = v.trim();
  return values;
}

/** Fills the placeholders that have values; missing ones are dropped and the spacing tidied. */
export function renderGreeting(text: string, values: Record<string, string>): string {
  const filled = text.replace(PLACEHOLDER, (_m, name: string) => values[name] ?? '');
  if (filled === text) return text;
  return filled
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ +([,.!?;:])/g, '$1')
    .trim();
}

/** `from` inclusive, `to` exclusive; `from` > `to` wraps past midnight; `from` == `to` is empty. */
export function inTimeWindow(minute: number, from: string, to: string): boolean {
  const start = parseTime(from) ?? 0;
  const end = parseTime(to) ?? 0;
  if (start < end) return minute >= start && minute < end;
  if (start > end) return minute >= start || minute < end;
  return false;
}

function formatMinute(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

/** Why a variant does not match (empty: it matches). Its conditions are combined with AND. */
export function variantMismatches(
  variant: GreetingVariant,
  caller: GreetingCaller,
  minute: number,
  values: Record<string, string>,
): string[] {
  const reasons: string[] = [];
  if (variant.tag !== undefined) {
    const wanted = variant.tag.trim().toLowerCase();
    if (!caller.contact) reasons.push(`tag "${variant.tag}": the caller has no contact`);
    else if (!caller.contact.tags.some((t) => t.trim().toLowerCase() === wanted)) {
      reasons.push(`tag "${variant.tag}" is not a tag of the caller's contact`);
    }
  }
  if (variant.from !== undefined && variant.to !== undefined && !inTimeWindow(minute, variant.from, variant.to)) {
    reasons.push(`${formatMinute(minute)} is outside ${variant.from}-${variant.to} (Europe/Berlin)`);
  }
  if (variant.min_calls_today !== undefined && caller.callsToday < variant.min_calls_today) {
    reasons.push(`${caller.callsToday} calls today, fewer than ${variant.min_calls_today}`);
  }
  for (const name of placeholdersOf(variant.greeting)) {
    if (values[name] === undefined) reasons.push(`placeholder {{${name}}} has no value`);
  }
  return reasons;
}

/**
 * Which greeting is spoken: the first variant whose conditions all hold and whose placeholders all
 * have values; otherwise the default greeting (null when the agent has none).
 */
export function chooseGreeting(
  defaultGreeting: string | null,
  variants: GreetingVariant[] | null,
  caller: GreetingCaller,
): GreetingChoice {
  const minute = zonedParts(GREETING_TIME_ZONE, caller.at).minute;
  const values = placeholderValues(caller);
  const verdicts = (variants ?? []).map((variant, index) => {
    const reasons = variantMismatches(variant, caller, minute, values);
    return { index, matched: reasons.length === 0, reasons };
  });
  const winner = verdicts.find((v) => v.matched);
  const base = { local_time: formatMinute(minute), variants: verdicts };
  if (winner) {
    const text = renderGreeting(variants![winner.index]!.greeting, values);
    return { ...base, greeting: text, source: 'variant', variant_index: winner.index, missing_placeholders: [] };
  }
  if (defaultGreeting === null) {
    return { ...base, greeting: null, source: 'none', variant_index: null, missing_placeholders: [] };
  }
  const missing = placeholdersOf(defaultGreeting).filter((name) => values[name] === undefined);
  return {
    ...base,
    greeting: renderGreeting(defaultGreeting, values),
    source: 'default',
    variant_index: null,
    missing_placeholders: missing,
  };
}
