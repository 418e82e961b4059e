import { z } from '../openapi/zod.js';

export const E164_PATTERN = /^\+[1-9]\d{1,14}$/;

export const PHONE_NUMBER_MESSAGE = 'Must be a phone number in E.164 format, e.g. +4930123456';

/**
 * A written phone number as E.164, or null when it cannot be one. Spaces, dashes, dots, slashes
 * and brackets are stripped, as is the German trunk zero written `(0)` after a country code.
 * `00` before the country code becomes `+`; a number in German national format (one leading `0`,
 * then an area code and number, at least 4 digits) becomes `+49` (the service's agents are German).
 * Anything else must already start with `+`.
 */
export function normalizePhoneNumber(input: string): string | null {
  let value = input
    .trim()
    .replace(/\(0\)/g, '')
    .replace(/[\s\-./()[\]]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  else if (/^0[1-9]\d{3,}$/.test(value)) value = `+49${value.slice(1)}`;
  return E164_PATTERN.test(value) ? value : null;
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
      'E.164; spaces, dashes, dots, slashes and brackets are stripped, 00 becomes +, a leading 0 becomes +49',
    example: '+4930123456',
  });

/** The same, where an empty string means "no number" (stored as null). */
export const optionalPhoneNumberField = z.preprocess(
  (value) => (typeof value === 'string' && value.trim() === '' ? null : value),
  phoneNumberField.nullable(),
);
