import type { Knex } from 'knex';

/** Typed post-call outcome fields of an agent; calls carry their values (a later migration). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE agents ADD COLUMN analysis_fields jsonb NOT NULL DEFAULT '[]'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents DROP COLUMN analysis_fields');
}
