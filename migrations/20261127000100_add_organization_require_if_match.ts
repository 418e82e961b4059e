import type { Knex } from 'knex';

/** Opt-in strictness: configuration writes of the organization need If-Match (428 without it). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE organizations ADD COLUMN require_if_match boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE organizations DROP COLUMN require_if_match');
}
