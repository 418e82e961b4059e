import type { Knex } from 'knex';

/** Forwarding slots of an agent, numbered `00`..`99`; the number is unique per agent. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('forwarding_slots', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('slotnummer').notNullable();
    t.text('cases').notNullable();
    t.text('slot_belegung').nullable();
    t.text('prioritaet_1').nullable();
    t.text('prioritaet_2').nullable();
    t.text('prioritaet_3').nullable();
    t.text('kunde').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['agent_id', 'slotnummer'], { indexName: 'forwarding_slots_agent_slotnummer_unique' });
  });
  await knex.raw(`ALTER TABLE forwarding_slots
    ADD CONSTRAINT forwarding_slots_slotnummer_format CHECK (slotnummer ~ '^[0-9]{2}$'),
    ADD CONSTRAINT forwarding_slots_cases_length CHECK (char_length(cases) BETWEEN 1 AND 2000)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('forwarding_slots');
}
