import { normalizePhoneNumber } from '../phone/phone-number.js';

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

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** Two letters, two check digits, then letters, digits and single spaces (trimmed to a valid IBAN below). */
const IBAN_CANDIDATE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,34}/g;

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

function replaceIbans(text: string): string {
  return text.replace(IBAN_CANDIDATE, (candidate) => {
    // The longest prefix that is a valid IBAN (a word in capitals may follow it).
    for (let end = candidate.length; end >= 15; end--) {
      const head = candidate.slice(0, end);
      if (head.endsWith(' ')) continue;
      if (isValidIban(head.replace(/ /g, ''))) return PII_PLACEHOLDERS.iban + candidate.slice(end);
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
function phoneEnd(candidate: string): number | undefined {
  const cuts: number[] = [candidate.length];
  for (let i = candidate.length - 1; i > 0; i--)
    if (/[ \t/()-]/.test(candidate[i]!) && /\d/.test(candidate[i - 1]!)) cuts.push(i);
  for (const end of cuts) {
    const written = candidate.slice(0, end);
    if ((written.match(/\d/g)?.length ?? 0) < PHONE_MIN_DIGITS) return undefined;
    if (normalizePhoneNumber(written) !== null) return end;
  }
  return undefined;
}

function replacePhones(text: string): string {
  return text.replace(PHONE_CANDIDATE, (candidate) => {
    const end = phoneEnd(candidate);
    return end === undefined ? candidate : PII_PLACEHOLDERS.phone + candidate.slice(end);
  });
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
