import type { Knex } from 'knex';

/** Vacation mode of TalkPilot's agents: the backup takes the calls until vacation_end; notdienst keeps emergencies. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.boolean('vacation_mode').notNullable().defaultTo(false);
    t.timestamp('vacation_end', { useTz: true }).nullable();
    t.boolean('vacation_notdienst').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('vacation_notdienst');
    t.dropColumn('vacation_end');
    t.dropColumn('vacation_mode');
  });
}
