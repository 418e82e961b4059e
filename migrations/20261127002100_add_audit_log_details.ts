import type { Knex } from 'knex';

/** What an entry may add beyond route and resource: counts of an erasure, never a request body. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE audit_log ADD COLUMN details jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE audit_log DROP COLUMN details');
}
