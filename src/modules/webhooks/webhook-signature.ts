import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks signing (https://www.standardwebhooks.com): pure functions, no I/O. */

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes; the bytes are the HMAC key. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** base64 HMAC-SHA256 of `id.timestamp.body` with the secret's key. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** The headers of one delivery; several secrets (during a rotation) give space-separated signatures. */
export function signatureHeaders(secrets: string[], id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => `v1,${sign(secret, id, timestamp, body)}`).join(' '),
  };
}

/** What a receiver does: true when one `v1` signature matches and the timestamp is within tolerance. */
export function verifySignature(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  now: Date,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, headers.id, timestamp, body), 'base64');
  return headers.signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
