import { createHash } from 'node:crypto';
import { callerIdentity, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, ValidationError } from '../../errors/index.js';
import type { IdempotencyRepository, StoredResponse } from './idempotency.repository.js';

/** How long a key and its response are kept (Stripe: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A request still marked running after this long died with its instance: a retry may take the key. */
export const IDEMPOTENCY_LOCK_MS = 60_000;

/** Printable ASCII without spaces at either end, as Stripe and the IETF draft's examples use (UUIDs fit). */
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export type IdempotentRequest = { method: string; path: string; body: unknown };
export type Idempotency = { credential: string; key: string };
export type Begin = { kind: 'proceed'; claim: Idempotency } | { kind: 'replay'; response: StoredResponse };

/** The header's value: a bare token or a Structured Field string ("..."), 1-255 characters. */
export function parseIdempotencyKey(header: string): string {
  const value = header.trim();
  const unquoted = /^"(.*)"$/.exec(value)?.[1] ?? value;
  if (!KEY_PATTERN.test(unquoted)) {
    throw new ValidationError('Invalid Idempotency-Key header', [
      { field: 'Idempotency-Key', message: 'Must be 1-255 printable ASCII characters (a UUID is a good choice)' },
    ]);
  }
  return unquoted;
}

/** Method, path with query and the parsed JSON body: the same request gives the same fingerprint. */
export function fingerprintOf(request: IdempotentRequest): string {
  return createHash('sha256')
    .update(`${request.method.toUpperCase()} ${request.path}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

/**
 * `Idempotency-Key` on POST, PUT and PATCH: the first request with a key runs and its response is
 * kept; the same request again gets that response back without running; a different request with
 * the key is refused (422); one that arrives while the first is still running too (409).
 */
export class IdempotencyService {
  constructor(
    private readonly records: IdempotencyRepository,
    private readonly clock: Clock,
  ) {}

  async begin(auth: AuthContext, header: string, request: IdempotentRequest, attempt = 0): Promise<Begin> {
    const key = parseIdempotencyKey(header);
    const credential = callerIdentity(auth);
    const organizations = [...auth.organizations.keys()];
    const fingerprint = fingerprintOf(request);
    const now = this.clock.now();
    const claimed = await this.records.claim({
      credential,
      key,
      organizationId: organizations.length === 1 ? organizations[0]! : null,
      fingerprint,
      now,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      staleBefore: new Date(now.getTime() - IDEMPOTENCY_LOCK_MS),
    });
    if (claimed) return { kind: 'proceed', claim: { credential, key } };
    const record = await this.records.find(credential, key);
    // Deleted between the two statements (the first request was released): this one may run.
    if (!record) {
      if (attempt >= 3) throw new IdempotencyKeyInUseError();
      return this.begin(auth, header, request, attempt + 1);
    }
    if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    if (record.state === 'running' || record.response_status === null) throw new IdempotencyKeyInUseError();
    return {
      kind: 'replay',
      response: {
        status: record.response_status,
        contentType: record.response_content_type,
        location: record.response_location,
        body: record.response_body,
        headers: record.response_headers,
      },
    };
  }

  /**
   * Keeps the response for replay. Validation errors (400) and server errors are not kept: the key is
   * released, so a corrected request or a retry after an outage runs (as Stripe does).
   */
  async finish(claim: Idempotency, response: StoredResponse): Promise<void> {
    if (response.status === 400 || response.status >= 500) {
      await this.records.release(claim.credential, claim.key);
      return;
    }
    await this.records.complete(claim.credential, claim.key, response);
  }

  /** Deletes expired keys in batches; returns how many (the scheduled cleanup). */
  async deleteExpired(batchSize = 5000): Promise<number> {
    const now = this.clock.now();
    let total = 0;
    for (;;) {
      const deleted = await this.records.deleteExpired(now, batchSize);
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
