import type { Knex } from 'knex';

/**
 * The headers of a recorded response that say what it was (`Dry-Run`, `Test-Cases-Failed`), as a
 * JSON object, so a replay says the same (null: none).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_keys ADD COLUMN response_headers jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_keys DROP COLUMN response_headers');
}
