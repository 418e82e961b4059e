/** Pure statistics for experiment results: no I/O, checked against hand-computed values. */

const Z95 = 1.959963984540054;

/** Wilson score interval of `successes` out of `n` at 95%; null without calls. */
export function wilsonInterval(successes: number, n: number, z = Z95): { low: number; high: number } | null {
  if (n === 0) return null;
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** Standard normal CDF (Abramowitz and Stegun 26.2.17, absolute error below 7.5e-8). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const poly = t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  const tail = (Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI)) * poly;
  return x >= 0 ? 1 - tail : tail;
}

/**
 * Two-sided p-value of the pooled two-proportion z-test (a variant's done rate against the first
 * variant's); null when either side has no calls or the pooled rate is 0 or 1 (no variance).
 */
export function twoProportionPValue(k1: number, n1: number, k2: number, n2: number): number | null {
  if (n1 === 0 || n2 === 0) return null;
  const pooled = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return null;
  const z = (k2 / n2 - k1 / n1) / se;
  return 2 * (1 - normalCdf(Math.abs(z)));
}
