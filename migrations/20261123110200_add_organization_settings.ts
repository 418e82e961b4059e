import type { Knex } from 'knex';

/** Organization settings TalkPilot clients write (four switches) and read (the concurrency limit). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.boolean('cascade_done_same_number').notNullable().defaultTo(false);
    t.boolean('calendar_status_update').notNullable().defaultTo(false);
    t.boolean('forward_call_email').notNullable().defaultTo(false);
    t.boolean('transfer_popup_enabled').notNullable().defaultTo(false);
    t.integer('max_concurrent_calls').nullable();
    t.text('concurrency_overflow_number').nullable();
  });
  await knex.raw(`ALTER TABLE organizations
    ADD CONSTRAINT organizations_max_concurrent_calls CHECK (max_concurrent_calls > 0),
    ADD CONSTRAINT organizations_overflow_e164 CHECK (concurrency_overflow_number ~ '^\\+[1-9][0-9]{1,14}$')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('concurrency_overflow_number');
    t.dropColumn('max_concurrent_calls');
    t.dropColumn('transfer_popup_enabled');
    t.dropColumn('forward_call_email');
    t.dropColumn('calendar_status_update');
    t.dropColumn('cascade_done_same_number');
  });
}
