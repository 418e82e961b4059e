import type { Knex } from 'knex';

/**
 * A key's network allow-list and its place in a rotation chain:
 * - `allowed_ips`: null = any address, else the addresses and CIDR ranges (canonical text, checked
 *   by the API) a request must come from;
 * - `rotated_from` / `rotated_to`: the key it replaced and the key that replaced it (null when that
 *   key is deleted);
 * - `rate_limit_budget_id`: the rate-limit counters the key spends from, the first key of its
 *   rotation chain (null = its own id), so old and new key share one budget during the overlap.
 * One replacement per key: a second rotation of the same key is refused by the unique index too.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE api_keys
      ADD COLUMN allowed_ips text[],
      ADD COLUMN rotated_from uuid REFERENCES api_keys(id) ON DELETE SET NULL,
      ADD COLUMN rotated_to uuid REFERENCES api_keys(id) ON DELETE SET NULL,
      ADD COLUMN rate_limit_budget_id uuid,
      ADD CONSTRAINT api_keys_allowed_ips_size
        CHECK (allowed_ips IS NULL OR cardinality(allowed_ips) BETWEEN 1 AND 50);
    CREATE UNIQUE INDEX api_keys_rotated_to_unique ON api_keys (rotated_to) WHERE rotated_to IS NOT NULL;
    CREATE INDEX api_keys_rotated_from ON api_keys (rotated_from) WHERE rotated_from IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX api_keys_rotated_from;
    DROP INDEX api_keys_rotated_to_unique;
    ALTER TABLE api_keys
      DROP CONSTRAINT api_keys_allowed_ips_size,
      DROP COLUMN rate_limit_budget_id,
      DROP COLUMN rotated_to,
      DROP COLUMN rotated_from,
      DROP COLUMN allowed_ips;
  `);
}
