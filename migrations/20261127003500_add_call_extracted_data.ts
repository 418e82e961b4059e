import type { Knex } from 'knex';

/**
 * Typed outcomes of a call (`extracted_data`, checked against the agent's analysis_fields at write
 * time). The GIN index (jsonb_path_ops) serves the list's equality filters `extracted.<name>=`, which
 * are containment tests (`extracted_data @> {"name": value}`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE calls ADD COLUMN extracted_data jsonb NOT NULL DEFAULT '{}'::jsonb`);
  await knex.raw(`CREATE INDEX calls_extracted_data ON calls USING gin (extracted_data jsonb_path_ops)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX calls_extracted_data');
  await knex.raw('ALTER TABLE calls DROP COLUMN extracted_data');
}
