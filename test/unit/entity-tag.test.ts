import { describe, expect, it } from 'vitest';
import { entityTag, entityTagOfJson, ifMatchHolds, parseTagList } from '../../src/api/entity-tag.js';

describe('entity tags', () => {
  it('is a strong quoted tag of the JSON, equal for equal representations', () => {
    const tag = entityTag({ a: 1, b: 'x' });
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTagOfJson('{"a":1,"b":"x"}')).toBe(tag);
    expect(entityTag({ a: 1, b: 'y' })).not.toBe(tag);
  });

  it('reads If-Match lists, * and unquoted tags', () => {
    expect(parseTagList(undefined)).toBeUndefined();
    expect(parseTagList('  ')).toBeUndefined();
    expect(parseTagList(' * ')).toBe('*');
    expect(parseTagList('"a", W/"b",c')).toEqual(['"a"', 'W/"b"', '"c"']);
  });

  it('compares strongly: a weak tag never matches, * matches anything existing', () => {
    expect(ifMatchHolds(['"a"', '"b"'], '"b"')).toBe(true);
    expect(ifMatchHolds(['W/"b"'], '"b"')).toBe(false);
    expect(ifMatchHolds('*', '"b"')).toBe(true);
    expect(ifMatchHolds('*', undefined)).toBe(false);
  });
});
