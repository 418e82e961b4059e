import { describe, expect, it } from 'vitest';
import { isLikelyCard, isValidIban, PII_KINDS, redactPii } from '../../src/privacy/pii-redaction.js';

const ALL = [...PII_KINDS];
const YEAR = 2026;

describe('redactPii: what is replaced (German formats first)', () => {
  it.each([
    ['Meine Nummer ist 0170 1234567, danke', 'Meine Nummer ist [PHONE], danke'],
    ['Rufen Sie mich an: +49 (0)30 123 45 67.', 'Rufen Sie mich an: [PHONE].'],
    ['Festnetz 030/1234567', 'Festnetz [PHONE]'],
    ['(030) 123 45 67', '[PHONE]'],
    ['0049 30 1234567 oder +491701234567', '[PHONE] oder [PHONE]'],
    ['+49-170-1234567', '[PHONE]'],
    ['Schreiben Sie an anna.schmidt@example.de bitte', 'Schreiben Sie an [EMAIL] bitte'],
    ['Max.Mustermann+rechnung@firma-gmbh.co.uk', '[EMAIL]'],
    ['IBAN DE89 3704 0044 0532 0130 00 bitte', 'IBAN [IBAN] bitte'],
    ['DE89370400440532013000', '[IBAN]'],
    ['IBAN DE89 3704 0044 0532 0130 00 BITTE PRÜFEN', 'IBAN [IBAN] BITTE PRÜFEN'],
    ['Österreich: AT61 1904 3002 3457 3201', 'Österreich: [IBAN]'],
    ['Karte 4111 1111 1111 1111, gültig bis 12/28', 'Karte [CARD], gültig bis 12/28'],
    ['Mastercard 5555-5555-5555-4444', 'Mastercard [CARD]'],
    ['Amex 378282246310005', 'Amex [CARD]'],
    ['geboren am 24.12.1980', 'geboren am [BIRTHDATE]'],
    ['Mein Geburtsdatum ist 4.1.1975', 'Mein Geburtsdatum ist [BIRTHDATE]'],
    ['24.12.1980', '[BIRTHDATE]'],
    ['am 24. Dezember 1980 geboren', 'am [BIRTHDATE] geboren'],
    ['geb. 04.01.75', 'geb. [BIRTHDATE]'],
    ['born 1980-12-24', 'born [BIRTHDATE]'],
    ['Geburtstag: 01.03.2025 (das Baby)', 'Geburtstag: [BIRTHDATE] (das Baby)'],
    ['iban de89 3704 0044 0532 0130 00 bitte', 'iban [IBAN] bitte'],
    ['de89370400440532013000', '[IBAN]'],
    ['IBAN: DE 89 3704 0044 0532 0130 00.', 'IBAN: [IBAN].'],
    ['Mail an jörg@bücher.de bitte', 'Mail an [EMAIL] bitte'],
    ['anna@xn--bcher-kva.de', '[EMAIL]'],
    ['Zoë.Müller@straße.example', '[EMAIL]'],
    ['Rückruf 49 171 2345678 bitte', 'Rückruf [PHONE] bitte'],
    ['Nummer 49301234567.', 'Nummer [PHONE].'],
    ['aus Wien 43 1 5134567', 'aus Wien [PHONE]'],
  ])('%j -> %j', (input, expected) => {
    expect(redactPii(input, ALL, YEAR)).toBe(expected);
  });
});

describe('redactPii: look-alikes that stay', () => {
  it.each([
    'Bestellnummer 4711-0815',
    'Auftrag 0815-4711',
    'Bestellnummer 100234567891',
    'Kundennummer 0001234567',
    'Rechnung 2026-001234',
    'Rechnungsnummer RE-2026-04711',
    'Termin um 14:30 Uhr, alternativ 9.15 Uhr',
    'Zeitraum 08:00-17:00',
    'Das kostet 1.299,00 € oder 0,99 EUR',
    'Preis: 12.345,67 Euro',
    'Liefertermin am 03.12.2026',
    'Termin 2025-11-30 verschoben auf 12.01.2026',
    'PLZ 10115 Berlin, Hausnummer 12a',
    'Sendungsnummer 00340434161094042557',
    'Artikel 4006381333931',
    'Zählerstand 012345',
    'Version 1.2.3 und 10.0.19045',
    'DE12 3456 7890 1234 5678 90',
    'Karte 4111 1111 1111 1112',
    'Mail an support at firma dot de',
    'ab 12 Uhr bis 18 Uhr und am Samstag',
    'at 12 uhr bis 18 uhr oder 19 uhr',
    'de12 3456 7890 1234 5678 90',
    'Preis 49,90 € für 49 Stück',
    'Bestellnummer 4911 2345 6789',
  ])('%j stays', (input) => {
    expect(redactPii(input, ALL, YEAR)).toBe(input);
  });
});

describe('redactPii: only the kinds asked for', () => {
  const text = 'Anna, 0170 1234567, anna@example.de, DE89 3704 0044 0532 0130 00, geb. 24.12.1980';
  it('replaces nothing with no kinds', () => {
    expect(redactPii(text, [], YEAR)).toBe(text);
  });
  it('replaces only phone and email when those are listed', () => {
    expect(redactPii(text, ['phone', 'email'], YEAR)).toBe(
      'Anna, [PHONE], [EMAIL], DE89 3704 0044 0532 0130 00, geb. 24.12.1980',
    );
  });
  it('replaces every kind when all are listed', () => {
    expect(redactPii(text, ALL, YEAR)).toBe('Anna, [PHONE], [EMAIL], [IBAN], geb. [BIRTHDATE]');
  });
});

describe('checksums', () => {
  it('accepts valid IBANs and refuses a changed digit', () => {
    expect(isValidIban('DE89370400440532013000')).toBe(true);
    expect(isValidIban('DE89370400440532013001')).toBe(false);
  });
  it('accepts Luhn-valid card numbers with a card prefix only', () => {
    expect(isLikelyCard('4111111111111111')).toBe(true);
    expect(isLikelyCard('4111111111111112')).toBe(false);
    expect(isLikelyCard('1234567812345670')).toBe(false);
  });
});
