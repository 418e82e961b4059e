import { describe, expect, it } from 'vitest';
import { normalizePhoneNumber } from '../../src/phone/phone-number.js';

describe('normalizePhoneNumber', () => {
  it.each([
    ['+4930123456', '+4930123456'],
    [' +49 30 123456 ', '+4930123456'],
    ['+49-30-123/456', '+4930123456'],
    ['+49 (0)30 123456', '+4930123456'],
    ['0049 30 123456', '+4930123456'],
    ['030 123456', '+4930123456'],
    ['(030) 12 34 56', '+4930123456'],
    ['0171.2345678', '+491712345678'],
    ['+1 [415] 555 0100', '+14155550100'],
  ])('turns %j into %s', (input, expected) => {
    expect(normalizePhoneNumber(input)).toBe(expected);
  });

  it.each(['+12', '+4900000', '+999 1234567', '+49 171 1', '+1 415 555 01', '+44 20'])(
    'refuses %j, which has the shape of E.164 but is no number of its country',
    (input) => {
      expect(normalizePhoneNumber(input)).toBeNull();
    },
  );

  it.each(['', '123456', '+0123', '+49 30 ABC', '+', '+1234567890123456', '0', '00', '0123', '030', 'tel:+4930123'])(
    'refuses %j',
    (input) => {
      expect(normalizePhoneNumber(input)).toBeNull();
    },
  );
});
