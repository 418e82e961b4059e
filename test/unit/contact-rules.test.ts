import { describe, expect, it } from 'vitest';
import {
  cleanTags,
  composeName,
  resolveNames,
  splitName,
  type NameParts,
} from '../../src/modules/contacts/contact-rules.js';

const EMPTY: NameParts = { customer_name: null, salutation: null, first_name: null, last_name: null };

describe('composeName', () => {
  it('joins the parts that exist', () => {
    expect(composeName('Max', 'Muster')).toBe('Max Muster');
    expect(composeName(null, 'Muster')).toBe('Muster');
    expect(composeName(null, null)).toBeNull();
  });
});

describe('splitName', () => {
  it.each([
    ['Max Muster', { salutation: null, first_name: 'Max', last_name: 'Muster' }],
    ['  Max   Muster ', { salutation: null, first_name: 'Max', last_name: 'Muster' }],
    ['Muster, Max', { salutation: null, first_name: 'Max', last_name: 'Muster' }],
    [
      'Müller-Lüdenscheidt, Hans Peter',
      { salutation: null, first_name: 'Hans Peter', last_name: 'Müller-Lüdenscheidt' },
    ],
    ['Herr Muster', { salutation: 'Herr', first_name: null, last_name: 'Muster' }],
    ['FRAU Erika Muster', { salutation: 'Frau', first_name: 'Erika', last_name: 'Muster' }],
  ])('splits %j unambiguously', (name, parts) => {
    expect(splitName(name)).toEqual(parts);
  });

  it.each(['Cher', 'Anna Maria Schmidt', 'Max von Muster', 'a, b, c', ', Max', 'Herr'])('leaves %j unsplit', (name) => {
    const parts = splitName(name);
    expect([parts.first_name, parts.last_name]).toEqual([null, null]);
  });
});

describe('resolveNames', () => {
  it('composes the name from parts sent without one', () => {
    expect(resolveNames(EMPTY, { first_name: 'Max', last_name: 'Muster' })).toMatchObject({
      customer_name: 'Max Muster',
    });
  });

  it('recomposes the stored name when one part changes', () => {
    const current = { customer_name: 'Max Muster', salutation: 'Herr', first_name: 'Max', last_name: 'Muster' };
    expect(resolveNames(current, { last_name: 'Meier' })).toEqual({
      ...current,
      customer_name: 'Max Meier',
      last_name: 'Meier',
    });
  });

  it('keeps the name when both parts are cleared', () => {
    const current = { customer_name: 'Max Muster', salutation: null, first_name: 'Max', last_name: 'Muster' };
    expect(resolveNames(current, { first_name: null, last_name: null })).toMatchObject({ customer_name: 'Max Muster' });
  });

  it('splits a name sent without parts and clears parts it cannot split', () => {
    const current = { customer_name: 'Max Muster', salutation: null, first_name: 'Max', last_name: 'Muster' };
    expect(resolveNames(current, { customer_name: 'Erika Meier' })).toMatchObject({
      first_name: 'Erika',
      last_name: 'Meier',
    });
    expect(resolveNames(current, { customer_name: 'Anna Maria Schmidt' })).toMatchObject({
      first_name: null,
      last_name: null,
    });
  });

  it('takes a salutation from the name only when none is stored or sent', () => {
    expect(resolveNames(EMPTY, { customer_name: 'Frau Meier' }).salutation).toBe('Frau');
    expect(resolveNames({ ...EMPTY, salutation: 'Dr.' }, { customer_name: 'Frau Meier' }).salutation).toBe('Dr.');
    expect(resolveNames(EMPTY, { customer_name: 'Frau Meier', salutation: null }).salutation).toBeNull();
  });

  it('stores name and parts as sent when both are sent', () => {
    expect(resolveNames(EMPTY, { customer_name: 'Firma', first_name: 'Max', last_name: 'Muster' })).toEqual({
      customer_name: 'Firma',
      salutation: null,
      first_name: 'Max',
      last_name: 'Muster',
    });
  });
});

describe('cleanTags', () => {
  it('trims, drops empty tags and de-duplicates case-insensitively keeping the first spelling', () => {
    expect(cleanTags([' VIP ', 'vip', '', '  ', 'Neu', 'NEU', 'Stamm'])).toEqual(['VIP', 'Neu', 'Stamm']);
  });
});
