import type { Knex } from 'knex';

/** An erasure also counts the saved test cases it stripped of the person's number and texts. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('data_subject_erasures', (t) => {
    t.integer('test_cases').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('data_subject_erasures', (t) => {
    t.dropColumn('test_cases');
  });
}
