import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/http/graceful-shutdown.js';

describe('the in-flight responses of a draining server', () => {
  it('hands back every response added and not removed, whichever end or middle leaves', () => {
    const list = new InFlight<{ i: number }>();
    const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((i) => ({ i })) as [
      { i: number },
      { i: number },
      { i: number },
      { i: number },
      { i: number },
    ];
    const entries = [a, b, c, d, e].map((res) => list.add(res));
    expect(new Set(list)).toEqual(new Set([a, b, c, d, e]));
    list.remove(entries[2]!); // middle
    list.remove(entries[4]!); // the newest (head)
    list.remove(entries[0]!); // the oldest (tail)
    expect(new Set(list)).toEqual(new Set([b, d]));
    list.remove(entries[0]!); // twice: no effect
    expect([...list]).toHaveLength(2);
    list.remove(entries[1]!);
    list.remove(entries[3]!);
    expect([...list]).toEqual([]);
    const f = list.add(a);
    expect([...list]).toEqual([a]);
    list.remove(f);
    expect([...list]).toEqual([]);
  });
});
