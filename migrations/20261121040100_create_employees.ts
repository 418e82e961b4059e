import type { Knex } from 'knex';

/** Employees of an agent: the people calls are forwarded to, with their availability status. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('employees', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('phone_number').nullable();
    t.text('email').nullable();
    t.text('status').notNullable().defaultTo('anwesend');
    t.boolean('active').notNullable().defaultTo(true);
    t.boolean('get_mail').notNullable().defaultTo(false);
    t.date('back_at_work_at').nullable();
    t.text('notdienst_bereich').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`CREATE INDEX employees_agent_name_idx ON employees (agent_id, lower(name), id)`);
  await knex.raw(`ALTER TABLE employees
    ADD CONSTRAINT employees_name_length CHECK (char_length(name) BETWEEN 1 AND 255),
    ADD CONSTRAINT employees_phone_e164 CHECK (phone_number ~ '^\\+[1-9][0-9]{1,14}$'),
    ADD CONSTRAINT employees_status CHECK (status IN ('anwesend', 'urlaub', 'krank', 'weiterbildung', 'notdienst',
      'im_termin', 'ausser_haus')),
    ADD CONSTRAINT employees_notdienst_bereich_only_on_duty CHECK (notdienst_bereich IS NULL OR status = 'notdienst')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('employees');
}
