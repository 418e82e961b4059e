import { describe, expect, it } from 'vitest';
import { normalCdf, twoProportionPValue, wilsonInterval } from '../../src/modules/experiments/experiment-statistics.js';

describe('experiment statistics, against values computed by hand', () => {
  it('gives the Wilson 95% interval of 40 done calls out of 100', () => {
    // centre = (0.4 + 1.96²/200) / (1 + 1.96²/100) = 0.40370; half = 1.96·√(0.0024 + 1.96²/40000) / 1.03842 = 0.09430
    const interval = wilsonInterval(40, 100)!;
    expect(interval.low).toBeCloseTo(0.3094, 4);
    expect(interval.high).toBeCloseTo(0.498, 4);
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(wilsonInterval(0, 10)!.low).toBe(0);
  });

  it('gives the two-proportion p-value of 55/100 against 40/100', () => {
    // pooled 0.475, se = √(0.475·0.525·0.02) = 0.070622, z = 0.15 / 0.070622 = 2.1240, p = 2·(1 − Φ(2.1240)) = 0.0337
    expect(twoProportionPValue(40, 100, 55, 100)).toBeCloseTo(0.0337, 3);
    expect(twoProportionPValue(40, 100, 40, 100)).toBeCloseTo(1, 6);
    expect(twoProportionPValue(0, 10, 0, 10)).toBeNull();
    expect(twoProportionPValue(3, 0, 1, 5)).toBeNull();
  });

  it('has the normal distribution function at known points', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 6);
  });
});
