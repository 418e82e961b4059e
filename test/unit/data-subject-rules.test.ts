import { describe, expect, it } from 'vitest';
import { fullNamesOf, nameWordsOf, phoneVariants, subjectHash } from '../../src/modules/privacy/data-subject.rules.js';

describe('phoneVariants', () => {
  it('lists the stored forms of a German number, national form included', () => {
    expect(phoneVariants('+49301234567').sort()).toEqual(
      ['+49301234567', '0049301234567', '49301234567', '+490301234567', '00490301234567', '0301234567'].sort(),
    );
  });
  it('gives a foreign number no national form (a leading 0 is read as German)', () => {
    expect(phoneVariants('+43123456789')).not.toContain('0123456789');
    expect(phoneVariants('+43123456789')).toContain('0043123456789');
  });
});

describe('fullNamesOf and nameWordsOf', () => {
  it('takes a name of two words or more, from customer_name and from first and last name', () => {
    expect(fullNamesOf({ customer_name: ' Anna  Schmidt ', first_name: 'Anna', last_name: 'Schmidt' })).toEqual([
      'Anna Schmidt',
    ]);
    expect(fullNamesOf({ customer_name: 'Schmidt', first_name: null, last_name: 'Schmidt' })).toEqual([]);
    expect(fullNamesOf({ customer_name: 'Dr. Anna Schmidt', first_name: 'Anna', last_name: 'Schmidt' })).toEqual([
      'Dr. Anna Schmidt',
      'Anna Schmidt',
    ]);
  });
  it('lists the single words of two letters or more, for a greeting', () => {
    expect(nameWordsOf({ customer_name: 'Anna Schmidt', first_name: 'Anna', last_name: 'B' })).toEqual([
      'Anna',
      'Schmidt',
    ]);
  });
});

describe('subjectHash', () => {
  it('differs by organization and by kind, and is stable', () => {
    const a = subjectHash('org-a', { kind: 'phone_number', value: '+49301234567' });
    expect(a).toBe(subjectHash('org-a', { kind: 'phone_number', value: '+49301234567' }));
    expect(a).not.toBe(subjectHash('org-b', { kind: 'phone_number', value: '+49301234567' }));
    expect(a).not.toBe(subjectHash('org-a', { kind: 'email', value: '+49301234567' }));
    expect(a).not.toContain('1234567');
  });
});
