import { describe, expect, it } from 'vitest';
import {
  chooseGreeting,
  inTimeWindow,
  placeholdersOf,
  renderGreeting,
  type GreetingCaller,
  type GreetingVariant,
} from '../../src/modules/agents/greeting.js';

const contact = { first_name: 'Anna', last_name: 'Schmidt', salutation: 'Frau', tags: ['VIP', 'Stammkunde'] };
// 10:15 in Berlin in winter (CET).
const caller = (overrides: Partial<GreetingCaller> = {}): GreetingCaller => ({
  contact,
  callsToday: 0,
  variables: {},
  at: new Date('2026-11-23T09:15:00Z'),
  ...overrides,
});
const pick = (variants: GreetingVariant[], c = caller(), fallback: string | null = 'Guten Tag') =>
  chooseGreeting(fallback, variants, c);

describe('chooseGreeting', () => {
  it('takes the first variant whose conditions all hold, in order', () => {
    const choice = pick([
      { greeting: 'Hallo Neukunde', tag: 'neu' },
      { greeting: 'Hallo VIP', tag: 'vip' },
      { greeting: 'Hallo Stammkunde', tag: 'stammkunde' },
    ]);
    expect(choice).toMatchObject({ greeting: 'Hallo VIP', source: 'variant', variant_index: 1 });
    expect(choice.variants.map((v) => v.matched)).toEqual([false, true, true]);
  });

  it('compares tags case-insensitively', () => {
    expect(pick([{ greeting: 'A', tag: 'vIp' }]).greeting).toBe('A');
    expect(pick([{ greeting: 'A', tag: 'STAMMKUNDE' }]).greeting).toBe('A');
  });

  it('never matches a tag when the caller has no contact', () => {
    const choice = pick([{ greeting: 'A', tag: 'vip' }], caller({ contact: null }));
    expect(choice).toMatchObject({ greeting: 'Guten Tag', source: 'default' });
    expect(choice.variants[0]!.reasons[0]).toContain('no contact');
  });

  it('compares the window in Europe/Berlin: from inclusive, to exclusive', () => {
    const at = (iso: string) => caller({ at: new Date(iso) });
    const morning = [{ greeting: 'Guten Morgen', from: '08:00', to: '10:15' }];
    expect(pick(morning, at('2026-11-23T07:00:00Z')).greeting).toBe('Guten Morgen'); // 08:00 CET
    expect(pick(morning, at('2026-11-23T09:14:00Z')).greeting).toBe('Guten Morgen'); // 10:14
    expect(pick(morning, at('2026-11-23T09:15:00Z')).greeting).toBe('Guten Tag'); // 10:15
    expect(pick(morning, at('2026-07-01T06:00:00Z')).greeting).toBe('Guten Morgen'); // 08:00 CEST
    expect(pick(morning, at('2026-07-01T05:59:00Z')).greeting).toBe('Guten Tag'); // 07:59 CEST
  });

  it('wraps a window whose from is after its to past midnight', () => {
    const at = (iso: string) => caller({ at: new Date(iso) });
    const night = [{ greeting: 'Gute Nacht', from: '22:00', to: '06:00' }];
    expect(pick(night, at('2026-11-23T21:00:00Z')).greeting).toBe('Gute Nacht'); // 22:00
    expect(pick(night, at('2026-11-23T23:30:00Z')).greeting).toBe('Gute Nacht'); // 00:30
    expect(pick(night, at('2026-11-24T04:59:00Z')).greeting).toBe('Gute Nacht'); // 05:59
    expect(pick(night, at('2026-11-24T05:00:00Z')).greeting).toBe('Guten Tag'); // 06:00
    expect(pick(night, at('2026-11-23T20:59:00Z')).greeting).toBe('Guten Tag'); // 21:59
  });

  it('treats a window with from equal to to as empty', () => {
    expect(inTimeWindow(600, '10:00', '10:00')).toBe(false);
  });

  it('requires at least min_calls_today calls today', () => {
    const variants = [{ greeting: 'Schön, dass Sie wieder anrufen', min_calls_today: 2 }];
    expect(pick(variants, caller({ callsToday: 1 })).source).toBe('default');
    expect(pick(variants, caller({ callsToday: 2 })).source).toBe('variant');
  });

  it('combines the conditions of one variant with AND', () => {
    const variants = [{ greeting: 'VIP am Morgen', tag: 'vip', from: '08:00', to: '10:00', min_calls_today: 1 }];
    expect(pick(variants, caller({ callsToday: 1 })).source).toBe('default'); // 10:15 is outside
    expect(pick(variants, caller({ callsToday: 1, at: new Date('2026-11-23T08:00:00Z') })).source).toBe('variant');
    expect(
      pick(variants, caller({ callsToday: 0, at: new Date('2026-11-23T08:00:00Z') })).variants[0]!.reasons,
    ).toHaveLength(1);
  });

  it('fills placeholders from the contact and the variables', () => {
    const choice = pick(
      [{ greeting: 'Guten Tag {{anrede}} {{nachname}}, hier ist {{firma}}', tag: 'vip' }],
      caller({ variables: { firma: 'Acme' } }),
    );
    expect(choice.greeting).toBe('Guten Tag Frau Schmidt, hier ist Acme');
  });

  it('skips a variant with a placeholder that has no value', () => {
    const choice = pick(
      [
        { greeting: 'Hallo {{vorname}}, Ihr Termin ist {{termin}}', tag: 'vip' },
        { greeting: 'Hallo {{vorname}}', tag: 'vip' },
      ],
      caller(),
    );
    expect(choice).toMatchObject({ greeting: 'Hallo Anna', variant_index: 1 });
    expect(choice.variants[0]!.reasons).toEqual(['placeholder {{termin}} has no value']);
  });

  it('counts an empty contact field or variable as no value', () => {
    const c = caller({ contact: { ...contact, first_name: '  ' }, variables: { termin: '' } });
    expect(pick([{ greeting: 'Hallo {{vorname}}', tag: 'vip' }], c).source).toBe('default');
    expect(pick([{ greeting: '{{termin}}', tag: 'vip' }], c).source).toBe('default');
  });

  it('speaks the default greeting with placeholders that have no value left out', () => {
    const choice = chooseGreeting('Guten Tag {{vorname}}, wie kann ich helfen?', [], caller({ contact: null }));
    expect(choice).toMatchObject({
      greeting: 'Guten Tag, wie kann ich helfen?',
      source: 'default',
      missing_placeholders: ['vorname'],
    });
  });

  it('has no greeting when nothing matches and the agent has no default', () => {
    expect(chooseGreeting(null, null, caller())).toMatchObject({ greeting: null, source: 'none', variant_index: null });
  });
});

describe('placeholders', () => {
  it('finds each placeholder once and tolerates spaces inside the braces', () => {
    expect(placeholdersOf('{{ vorname }} {{vorname}} {{nachname}}')).toEqual(['vorname', 'nachname']);
    expect(renderGreeting('Hallo {{ vorname }}!', { vorname: 'Jo' })).toBe('Hallo Jo!');
    expect(renderGreeting('Ohne Platzhalter', {})).toBe('Ohne Platzhalter');
  });
});
