import type { Db } from '../../db/knex.js';

export type IdempotencyRecord = {
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_content_type: string | null;
  response_location: string | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
};

export type StoredResponse = {
  status: number;
  contentType: string | null;
  location: string | null;
  body: string | null;
  /** Headers that describe the answer (`Dry-Run`, `Test-Cases-Failed`); null when it had none. */
  headers: Record<string, string> | null;
};

const COLUMNS = [
  'fingerprint',
  'state',
  'response_status',
  'response_content_type',
  'response_location',
  'response_body',
  'response_headers',
] as const;

/** `idempotency_keys`: one row per credential and key. */
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes the key for a new request: inserts it, or takes over a row that expired or whose request
   * was abandoned (locked before `staleBefore`). Returns false when another request holds or held it.
   */
  async claim(input: {
    credential: string;
    key: string;
    organizationId: string | null;
    fingerprint: string;
    now: Date;
    expiresAt: Date;
    staleBefore: Date;
  }): Promise<boolean> {
    const result = await this.db.raw(
      `INSERT INTO idempotency_keys
         (credential, idempotency_key, organization_id, fingerprint, state, locked_at, created_at, expires_at)
       VALUES (?, ?, ?, ?, 'running', ?, ?, ?)
       ON CONFLICT (credential, idempotency_key) DO UPDATE SET
         organization_id = EXCLUDED.organization_id, fingerprint = EXCLUDED.fingerprint, state = 'running',
         response_status = NULL, response_content_type = NULL, response_location = NULL, response_body = NULL,
         response_headers = NULL,
         locked_at = EXCLUDED.locked_at, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
          OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_at <= ?)
       RETURNING 1`,
      [
        input.credential,
        input.key,
        input.organizationId,
        input.fingerprint,
        input.now,
        input.now,
        input.expiresAt,
        input.staleBefore,
      ],
    );
    return result.rows.length === 1;
  }

  async find(credential: string, key: string): Promise<IdempotencyRecord | undefined> {
    return this.db('idempotency_keys')
      .where({ credential, idempotency_key: key })
      .first(...COLUMNS);
  }

  async complete(credential: string, key: string, response: StoredResponse): Promise<void> {
    await this.db('idempotency_keys')
      .where({ credential, idempotency_key: key, state: 'running' })
      .update({
        state: 'done',
        response_status: response.status,
        response_content_type: response.contentType,
        response_location: response.location,
        response_body: response.body,
        response_headers: response.headers === null ? null : JSON.stringify(response.headers),
      });
  }

  /** The request ended in a way a retry should run again (validation error, outage). */
  async release(credential: string, key: string): Promise<void> {
    await this.db('idempotency_keys').where({ credential, idempotency_key: key, state: 'running' }).delete();
  }

  /** Deletes up to `limit` expired rows; returns how many. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const result = await this.db.raw(
      `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?))`,
      [now, limit],
    );
    return result.rowCount ?? 0;
  }
}
