import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { DataSubjectIdentifier } from './data-subject.schemas.js';

/**
 * The written forms under which a number (given in E.164) can be stored: contacts hold E.164, calls
 * hold what the telephony layer sent with spaces, dashes and brackets stripped. So `+49301234567`
 * is also looked for as `0301234567`, `0049301234567`, `+490301234567` (the `(0)` written after the
 * country code) and `00490301234567`. The national form only for German numbers (region DE).
 */
export function phoneVariants(e164: string): string[] {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return [e164];
  const cc = parsed.countryCallingCode;
  const national = parsed.nationalNumber;
  const variants = [e164, `00${cc}${national}`, `+${cc}0${national}`, `00${cc}0${national}`];
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
};

export const ZERO_COUNTS: ErasureCounts = { contacts: 0, calls: 0, webhook_deliveries: 0, idempotency_records: 0 };

/** `%` and `_` and `\` taken literally inside a LIKE pattern. */
export function literalLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
