import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';

export type WebhookSecretRow = {
  organization_id: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  rotated_at: Date | null;
  created_at: Date;
};

/** Every column of a WebhookSecretRow; queries select these, never `*`. */
const SECRET_COLUMNS = [
  'organization_id',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'rotated_at',
  'created_at',
] as const satisfies readonly (keyof WebhookSecretRow)[];

/** The per-organization signing secret. Stored readable (signing needs it); never logged. */
export class WebhookSecretRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The organization's secret, created on first use; concurrent first uses end with one secret. */
  async getOrCreate(organizationId: string, generate: () => string, at: Date): Promise<WebhookSecretRow> {
    return (await this.getOrCreateMany([organizationId], generate, at)).get(organizationId)!;
  }

  /**
   * The secrets of several organizations (one read for a batch of sends); the missing ones are
   * created as `getOrCreate` does.
   */
  async getOrCreateMany(
    organizationIds: string[],
    generate: () => string,
    at: Date,
  ): Promise<Map<string, WebhookSecretRow>> {
    const ids = [...new Set(organizationIds)];
    const read = async (which: string[]): Promise<WebhookSecretRow[]> =>
      which.length === 0
        ? []
        : this.db('organization_webhook_secrets').whereIn('organization_id', which).select(SECRET_COLUMNS);
    const found = new Map((await read(ids)).map((row) => [row.organization_id, row]));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      await this.db('organization_webhook_secrets')
        .insert(missing.map((id) => ({ organization_id: id, secret: generate(), created_at: at })))
        .onConflict('organization_id')
        .ignore();
      for (const row of await read(missing)) found.set(row.organization_id, row);
    }
    return found;
  }

  /** The current secret becomes the previous one (signing until `previousExpiresAt`); one row update. */
  async rotate(organizationId: string, secret: string, at: Date, previousExpiresAt: Date): Promise<WebhookSecretRow> {
    const [row] = await this.db('organization_webhook_secrets')
      .where({ organization_id: organizationId })
      .update({
        previous_secret: this.db.ref('secret'),
        previous_secret_expires_at: previousExpiresAt,
        secret,
        rotated_at: at,
      })
      .returning(SECRET_COLUMNS);
    return row;
  }
}

/** The secrets that sign at `now`: the current one, and the previous one during its grace period. */
export function signingSecrets(row: WebhookSecretRow, now: Date): string[] {
  const previousActive =
    row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > now.getTime();
  return previousActive ? [row.secret, row.previous_secret!] : [row.secret];
}
