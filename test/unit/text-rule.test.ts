import { describe, expect, it } from 'vitest';
import { charCount, findUnstorable, MAX_JSON_DEPTH, text } from '../../src/validation/text.js';

const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : { a: nested(depth - 1) });

describe('the text rule', () => {
  it('counts code points as PostgreSQL does: an emoji or a combining sequence part is one each', () => {
    expect(charCount('😀😀')).toBe(2);
    expect(charCount('e\u0301')).toBe(2);
    expect(charCount('')).toBe(0);
  });

  it('accepts valid surrogate pairs and refuses NUL and unpaired surrogates of either half', () => {
    expect(findUnstorable({ a: '😀', b: ['ok'] })).toBeUndefined();
    expect(findUnstorable({ a: 'x\u0000' })).toEqual({ path: ['a'], message: expect.stringContaining('NUL') });
    expect(findUnstorable({ a: ['ok', '\ud800'] })?.path).toEqual(['a', 1]);
    expect(findUnstorable({ a: 'x\udc00y' })?.path).toEqual(['a']);
    expect(findUnstorable({ a: '\udc00\ud800' })?.path).toEqual(['a']);
  });

  it('checks object keys, and names the shallowest problem first', () => {
    expect(findUnstorable({ 'k\u0000': 1 })?.path).toEqual(['k\u0000']);
    expect(findUnstorable({ deep: { x: '\u0000' }, top: '\u0000' })?.path).toEqual(['top']);
    expect(findUnstorable({ a: { x: '\u0000' }, b: { y: '\u0000' } })?.path).toEqual(['a', 'x']);
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without overflowing the stack`, () => {
    expect(findUnstorable(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findUnstorable(nested(MAX_JSON_DEPTH + 1))?.message).toContain('nest');
    expect(findUnstorable(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`))?.message).toContain('nest');
  });

  it('text() limits lengths in code points and repeats the NUL/surrogate check', () => {
    const schema = text({ min: 1, max: 3, trim: true });
    expect(schema.safeParse('😀😀😀').success).toBe(true);
    expect(schema.safeParse('😀😀😀😀').success).toBe(false);
    expect(schema.safeParse('   ').success).toBe(false);
    expect(schema.safeParse('a\u0000').success).toBe(false);
    expect(schema.safeParse(12).success).toBe(false);
  });
});
