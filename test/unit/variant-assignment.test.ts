import { describe, expect, it } from 'vitest';
import { assignVariant, stickyKey } from '../../src/modules/experiments/variant-assignment.js';

const EXPERIMENT = '3f0c2b8e-1d4a-4c6b-9e7f-2a1b3c4d5e6f';

describe('assignVariant', () => {
  it('lands 10,000 routed calls within 2 points of the weights', () => {
    for (const weights of [
      [50, 50],
      [70, 30],
      [10, 20, 30, 40],
      [90, 5, 5],
    ]) {
      const variants = weights.map((weight, i) => ({ name: `v${i}`, weight }));
      const counts = new Map<string, number>();
      for (let i = 0; i < 10_000; i++) {
        const v = assignVariant(EXPERIMENT, stickyKey('call', `call-${i}`, null), variants);
        counts.set(v.name, (counts.get(v.name) ?? 0) + 1);
      }
      for (const v of variants) expect(Math.abs(((counts.get(v.name) ?? 0) / 10_000) * 100 - v.weight)).toBeLessThan(2);
    }
  });

  it('gives the same call id or caller number the same variant every time', () => {
    const variants = [
      { name: 'A', weight: 50 },
      { name: 'B', weight: 50 },
    ];
    for (let i = 0; i < 100; i++) {
      const key = stickyKey('caller_number', `c-${i}`, `+4930${1000000 + i}`);
      expect(assignVariant(EXPERIMENT, key, variants)).toBe(assignVariant(EXPERIMENT, key, variants));
    }
    // Sticky by caller: two calls of one caller share the variant; an unknown caller falls back to the call.
    expect(stickyKey('caller_number', 'a', '+49301')).toBe(stickyKey('caller_number', 'b', '+49301'));
    expect(stickyKey('caller_number', 'a', null)).toBe('call:a');
  });
});
