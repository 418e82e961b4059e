import type { Knex } from 'knex';

/** An erasure also counts the outbound call jobs to the person it deleted. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('data_subject_erasures', (t) => {
    t.integer('outbound_calls').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('data_subject_erasures', (t) => {
    t.dropColumn('outbound_calls');
  });
}
