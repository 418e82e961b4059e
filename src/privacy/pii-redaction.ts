import { normalizeCallerNumber } from '../phone/phone-number.js';

/** What an agent's `redact_pii` may list; each kind has its placeholder. */
export const PII_KINDS = ['phone', 'email', 'iban', 'card', 'birthdate'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export const PII_PLACEHOLDERS: Record<PiiKind, string> = {
  phone: '[PHONE]',
  email: '[EMAIL]',
  iban: '[IBAN]',
  card: '[CARD]',
  birthdate: '[BIRTHDATE]',
};

/** Letters and digits of any script on both sides (`jörg@bücher.de`); the top-level domain letters or punycode. */
const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.(?:\p{L}{2,}|xn--[a-z0-9-]+)(?![\p{L}\p{N}])/giu;

/**
 * Two letters, two check digits (a space may stand between them: `DE 89 ...`), then letters, digits
 * and single spaces, in either case (trimmed to a valid IBAN below).
 */
const IBAN_CANDIDATE = /(?<![\p{L}\p{N}])[A-Z]{2} ?\d{2}(?: ?[A-Z0-9]){11,34}/giu;

/** ISO 13616 IBAN length by country (SWIFT IBAN registry): a candidate must have its country's length. */
const IBAN_LENGTHS: Record<string, number> = Object.fromEntries(
  Object.entries({
    15: 'NO',
    16: 'BE',
    18: 'DK FI FO GL NL',
    19: 'MK SI',
    20: 'AT BA EE KZ LT LU XK',
    21: 'CH CR HR LI LV',
    22: 'BG BH DE GB GE IE ME RS',
    23: 'AE GI IL TL',
    24: 'AD CZ ES MD PK RO SA SE SK TN VG',
    25: 'PT ST',
    26: 'IS TR',
    27: 'FR GR IT MC MR SM',
    28: 'AL AZ BY CY DO GT HU LB PL SV',
    29: 'BR EG PS QA UA',
    30: 'JO KW MU',
    31: 'MT',
  }).flatMap(([length, countries]) => countries.split(' ').map((c) => [c, Number(length)])),
);

/** 13 to 19 digits, optionally in groups split by single spaces or dashes. */
const CARD_CANDIDATE = /(?<![\d.,])\d(?:[ -]?\d){12,18}(?![\d.,]*\d)/g;

const MONTHS =
  'januar|jänner|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember|january|february|march|may|june|july|october|december';
/** 24.12.1980, 4.1.1975, 1980-12-24, 24. Dezember 1980. Two-digit years only after a birth word. */
const FULL_DATE = new RegExp(
  String.raw`\b(?:(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.(?<y1>(?:19|20)\d{2})|(?<y2>(?:19|20)\d{2})-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])|(?:0?[1-9]|[12]\d|3[01])\.? (?:${MONTHS}) (?<y3>(?:19|20)\d{2}))\b`,
  'giu',
);
const SHORT_DATE = /\b(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.\d{2}\b/g;
const BIRTH_WORDS =
  /(geboren|geb\.|geburtsdatum|geburtstag|jahrgang|date of birth|born|birthday|dob)\W*(?:am|ist|der|den|on|:)?\W*$/i;

/**
 * A written phone number: starts with `+`, `00`, `0` or `(0`, then digits with spaces, slashes,
 * dashes and brackets. Dots are not separators here, so dates never look like numbers.
 */
const PHONE_CANDIDATE = /(?<![\w+])(?:\+|\(0|0)[\d \t/()-]{5,}\d/g;
/**
 * The country code of Germany, Austria or Switzerland written without `+` or `00` (`49 171 2345678`,
 * as some telephony layers and callers write it); checked as if `+` stood before it. Either a
 * separator follows the country code or the number is one unbroken run of digits, so that grouped
 * order numbers (`4911 0815 1234 5`) stay. Other country codes are left out: a bare digit run
 * starting with them is far more often an order number.
 */
const BARE_COUNTRY_CANDIDATE =
  /(?<![\w+,.])(?:49|43|41)(?:[ \t/-][1-9][\d \t/()-]{4,}\d|[1-9]\d{6,13}(?![\d]|[,.]\d))/g;
/** At least nine digits as written (`030 1234567`): shorter digit runs are order numbers, not phones. */
const PHONE_MIN_DIGITS = 9;

/** ISO 13616: move the first four characters to the end, letters to numbers, the result mod 97 is 1. */
export function isValidIban(compact: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55);
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** Luhn, and a prefix that payment cards use (Visa, Mastercard, Amex, Maestro, Discover, JCB, Diners). */
export function isLikelyCard(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19 || !/^(?:4|5[0-5]|2[2-7]|3[0-9]|6)/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * An IBAN as written: its country's length, a valid checksum, and at least ten digits after the check
 * digits (every country's account part has them), so that words in lower case (`at 12 uhr bis ...`)
 * are not taken for one by the 1 in 97 chance of a checksum.
 */
function isWrittenIban(written: string): boolean {
  const compact = written.replace(/ /g, '').toUpperCase();
  return (
    IBAN_LENGTHS[compact.slice(0, 2)] === compact.length &&
    (compact.slice(4).match(/\d/g)?.length ?? 0) >= 10 &&
    isValidIban(compact)
  );
}

function replaceIbans(text: string): string {
  return text.replace(IBAN_CANDIDATE, (candidate) => {
    // The prefix that is a valid IBAN (a word may follow it).
    for (let end = candidate.length; end >= 15; end--) {
      const head = candidate.slice(0, end);
      if (head.endsWith(' ')) continue;
      if (isWrittenIban(head)) return PII_PLACEHOLDERS.iban + candidate.slice(end);
    }
    return candidate;
  });
}

function replaceCards(text: string): string {
  return text.replace(CARD_CANDIDATE, (candidate) =>
    isLikelyCard(candidate.replace(/[ -]/g, '')) ? PII_PLACEHOLDERS.card : candidate,
  );
}

/**
 * A full date is a birthdate when a birth word stands right before it, or when its year lies at
 * least two years before `referenceYear` (appointments, deliveries and invoices are recent dates).
 */
function replaceBirthdates(text: string, referenceYear: number): string {
  const before = (offset: number, source: string) => source.slice(Math.max(0, offset - 40), offset);
  const full = text.replace(FULL_DATE, (match, ...args) => {
    const offset = args[args.length - 3] as number;
    const source = args[args.length - 2] as string;
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    const year = Number(groups.y1 ?? groups.y2 ?? groups.y3);
    return year <= referenceYear - 2 || BIRTH_WORDS.test(before(offset, source)) ? PII_PLACEHOLDERS.birthdate : match;
  });
  return full.replace(SHORT_DATE, (match, offset: number, source: string) =>
    BIRTH_WORDS.test(before(offset, source)) ? PII_PLACEHOLDERS.birthdate : match,
  );
}

/** The longest run of the candidate's groups (from its start) that is a valid number, region DE. */
function phoneEnd(candidate: string, prefix = ''): number | undefined {
  const cuts: number[] = [candidate.length];
  for (let i = candidate.length - 1; i > 0; i--)
    if (/[ \t/()-]/.test(candidate[i]!) && /\d/.test(candidate[i - 1]!)) cuts.push(i);
  for (const end of cuts) {
    const written = candidate.slice(0, end);
    if ((written.match(/\d/g)?.length ?? 0) < PHONE_MIN_DIGITS) return undefined;
    if (normalizeCallerNumber(prefix + written) !== null) return end;
  }
  return undefined;
}

function replacePhones(text: string): string {
  const replace = (prefix: string) => (candidate: string) => {
    const end = phoneEnd(candidate, prefix);
    return end === undefined ? candidate : PII_PLACEHOLDERS.phone + candidate.slice(end);
  };
  return text.replace(PHONE_CANDIDATE, replace('')).replace(BARE_COUNTRY_CANDIDATE, replace('+'));
}

/**
 * `text` with the kinds of personal data in `kinds` replaced by their placeholders. Order matters:
 * e-mail addresses and IBANs first (they contain digit runs), cards, then dates, then phone numbers.
 */
export function redactPii(text: string, kinds: readonly PiiKind[], referenceYear: number): string {
  if (kinds.length === 0 || text === '') return text;
  let out = text;
  if (kinds.includes('email')) out = out.replace(EMAIL, PII_PLACEHOLDERS.email);
  if (kinds.includes('iban')) out = replaceIbans(out);
  if (kinds.includes('card')) out = replaceCards(out);
  if (kinds.includes('birthdate')) out = replaceBirthdates(out, referenceYear);
  if (kinds.includes('phone')) out = replacePhones(out);
  return out;
}

/**
 * Call outcomes with `kinds` redacted in the values of string-typed fields. Enum values, dates,
 * numbers and booleans stay as they are: they are checked against the field's type, which a
 * placeholder would break, and hold no free text.
 */
export function redactStringOutcomes<T extends Record<string, string | number | boolean>>(
  fields: readonly { name: string; type: string }[],
  data: T,
  kinds: readonly PiiKind[],
  referenceYear: number,
): T {
  if (kinds.length === 0) return data;
  const strings = new Set(fields.filter((f) => f.type === 'string').map((f) => f.name));
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(data))
    out[name] = strings.has(name) && typeof value === 'string' ? redactPii(value, kinds, referenceYear) : value;
  return out as T;
}
