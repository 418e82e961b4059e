import { createHash } from 'node:crypto';

export type WeightedVariant = { name: string; weight: number };

/**
 * The variant of one call: a stable hash of the experiment and the sticky key (the call id, or the
 * caller's number) picks a point in [0, 100) and the variants' weights cut that range in order.
 * The same key always lands on the same variant, on every instance and after a restart; keys spread
 * evenly, so the share of each variant approaches its weight.
 */
export function assignVariant<V extends WeightedVariant>(experimentId: string, key: string, variants: readonly V[]): V {
  const digest = createHash('sha256').update(`${experimentId}\u0000${key}`).digest();
  const point = (digest.readUInt32BE(0) / 0x1_0000_0000) * 100;
  let upTo = 0;
  for (const variant of variants) {
    upTo += variant.weight;
    if (point < upTo) return variant;
  }
  return variants[variants.length - 1]!;
}

/** What a call is sticky by: the caller's number when asked for and known, else the call. */
export function stickyKey(stickyBy: 'call' | 'caller_number', callId: string, callerNumber: string | null): string {
  return stickyBy === 'caller_number' && callerNumber !== null ? `caller:${callerNumber}` : `call:${callId}`;
}
