import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from '../openapi/zod.js';

export const E164_PATTERN = /^\+[1-9]\d{1,14}$/;

export const PHONE_NUMBER_MESSAGE = 'Must be a phone number in E.164 format, e.g. +4930123456';

/** Where a number written without a country code is dialled from: the service's agents are German. */
export const DEFAULT_REGION = 'DE';

// What may appear in a written number before libphonenumber-js judges it: digits, a leading `+`
// and separators. Letters (vanity numbers, `tel:` URIs, extensions) are refused outright.
const WRITTEN_FORM = /^\+?[0-9]+$/;

/**
 * A written phone number as E.164, or null when it is not a valid number. Spaces, dashes, dots,
 * slashes and brackets are stripped, as is the German trunk zero written `(0)` after a country code.
 * `00` before the country code becomes `+`; a number in national format (one leading `0`) is read as
 * German. libphonenumber-js then checks the number against the numbering plan of its country, so
 * `+12` or `+4900000` are refused. Anything else must already start with `+`.
 */
export function normalizePhoneNumber(input: string): string | null {
  let value = input
    .trim()
    .replace(/\(0\)/g, '')
    .replace(/[\s\-./()[\]]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  if (!WRITTEN_FORM.test(value) || !(value.startsWith('+') || /^0[1-9]/.test(value))) return null;
  const parsed = parsePhoneNumberFromString(value, DEFAULT_REGION);
  if (!parsed?.isValid()) return null;
  return E164_PATTERN.test(parsed.number) ? parsed.number : null;
}

/**
 * A caller number as a telephony layer reports it, as E.164 when it is a valid number: the written
 * forms `normalizePhoneNumber` takes, and also a country code without `+` or `00` in front
 * (`49301234567`, as some SIP trunks send the caller id). null for anything else (`anonymous`, an
 * internal extension, a number that is not valid in its country).
 */
export function normalizeCallerNumber(input: string): string | null {
  const written = normalizePhoneNumber(input);
  if (written !== null) return written;
  const digits = input.trim().replace(/[\s\-./()[\]]/g, '');
  return /^[1-9]\d{7,14}$/.test(digits) ? normalizePhoneNumber(`+${digits}`) : null;
}

/** A request field holding a phone number: accepted in the written forms above, output as E.164. */
export const phoneNumberField = z
  .string()
  .max(40, PHONE_NUMBER_MESSAGE)
  .transform((value, ctx) => {
    const normalized = normalizePhoneNumber(value);
    if (normalized === null) {
      ctx.addIssue({ code: 'custom', message: PHONE_NUMBER_MESSAGE });
      return z.NEVER;
    }
    return normalized;
  })
  .openapi({
    type: 'string',
    description:
      'E.164; spaces, dashes, dots, slashes and brackets are stripped, 00 becomes +, a leading 0 becomes +49; the number must be valid in its country',
    example: '+4930123456',
  });

/** The same, where an empty string means "no number" (stored as null). */
export const optionalPhoneNumberField = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() === '' ? null : value),
  phoneNumberField.nullable(),
);
