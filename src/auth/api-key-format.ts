import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PATTERN = /^svc_live_[0-9a-f]{32}$/;
const PREFIX_LENGTH = 13;

/** The first characters of a key: stored and shown in key lists, safe to log. */
export function apiKeyPrefix(raw: string): string {
  return raw.slice(0, PREFIX_LENGTH);
}

/** One-shot: no Hash object per request (the key check hashes on every request the cache answers). */
export function hashApiKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

/** 128 random bits; only the hash and the first 13 characters are ever stored. */
export function generateApiKey(): { raw: string; hash: string; prefix: string } {
  const raw = `svc_live_${randomBytes(16).toString('hex')}`;
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, PREFIX_LENGTH) };
}
