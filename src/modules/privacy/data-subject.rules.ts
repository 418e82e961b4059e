import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { DataSubjectIdentifier } from './data-subject.schemas.js';

/**
 * The written forms under which a number (given in E.164) can be stored. Contacts and calls hold
 * E.164 (intake normalises, and a migration brought older calls to it), but a number that is not
 * valid in its country keeps its written form with spaces, dashes and brackets stripped. So
 * `+49301234567` is also looked for as `0301234567`, `0049301234567`, `49301234567`, `+490301234567`
 * (the `(0)` written after the country code) and `00490301234567`. The national form only for
 * German numbers (region DE).
 */
export function phoneVariants(e164: string): string[] {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return [e164];
  const cc = parsed.countryCallingCode;
  const national = parsed.nationalNumber;
  const variants = [e164, `00${cc}${national}`, `${cc}${national}`, `+${cc}0${national}`, `00${cc}0${national}`];
  if (cc === '49') variants.push(`0${national}`);
  return [...new Set(variants)];
}

/**
 * What a running erasure is found by when the same person is asked for again: a hash of the
 * organization and the identifier. Only running erasures keep it; it is cleared on completion.
 */
export function subjectHash(organizationId: string, identifier: DataSubjectIdentifier): string {
  return createHash('sha256').update(`${organizationId}\n${identifier.kind}\n${identifier.value}`).digest('hex');
}

export type ErasureCounts = {
  contacts: number;
  calls: number;
  webhook_deliveries: number;
  idempotency_records: number;
  test_cases: number;
  outbound_calls: number;
};

export const ZERO_COUNTS: ErasureCounts = {
  contacts: 0,
  calls: 0,
  webhook_deliveries: 0,
  idempotency_records: 0,
  test_cases: 0,
  outbound_calls: 0,
};

type Named = { customer_name: string | null; first_name: string | null; last_name: string | null };

const words = (text: string | null) =>
  (text ?? '')
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');

/**
 * The full names of a contact as free text writes them: `customer_name` and `first_name last_name`,
 * each only when it has at least two words. One word alone (`Anna`, `Schmidt`) names too many other
 * people to erase every text that contains it.
 */
export function fullNamesOf(contact: Named): string[] {
  const names = [words(contact.customer_name), [...words(contact.first_name), ...words(contact.last_name)]];
  return [...new Set(names.filter((n) => n.length >= 2).map((n) => n.join(' ')))];
}

/**
 * The single words of a contact's names (two letters or more): a greeting addresses a known caller
 * as `{{vorname}}` or `{{anrede}} {{nachname}}`, so a saved greeting of a caller is looked at for them.
 */
export function nameWordsOf(contact: Named): string[] {
  const all = [...words(contact.customer_name), ...words(contact.first_name), ...words(contact.last_name)];
  return [...new Set(all.filter((w) => [...w].length >= 2))];
}

/** `%` and `_` and `\` taken literally inside a LIKE pattern. */
export function literalLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
