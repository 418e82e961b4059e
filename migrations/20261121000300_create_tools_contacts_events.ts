import type { Knex } from 'knex';

/** Tables that several resources share: tools (workflows name them), contacts (greetings read them), events. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tools', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('display_name').nullable();
    t.text('description').nullable();
    t.text('tool_type').notNullable();
    t.jsonb('config').notNullable().defaultTo('{}');
    t.boolean('is_enabled').notNullable().defaultTo(true);
    t.integer('priority').notNullable().defaultTo(0);
    t.uuid('employee_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['agent_id', 'name']);
  });
  await knex.raw(`ALTER TABLE tools ADD CONSTRAINT tools_name_format CHECK (name ~ '^[a-z][a-z0-9_]{0,99}$')`);

  await knex.schema.createTable('contacts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('customer_name').nullable();
    t.text('salutation').nullable();
    t.text('first_name').nullable();
    t.text('last_name').nullable();
    t.text('phone_number').nullable();
    t.text('mobile_number').nullable();
    t.text('landline_number').nullable();
    t.text('email').nullable();
    t.text('address').nullable();
    t.text('company').nullable();
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.text('note').nullable();
    t.text('customer_number').nullable();
    t.date('last_contact_date').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['agent_id', 'created_at', 'id']);
    t.index(['agent_id', 'phone_number']);
    t.index(['agent_id', 'mobile_number']);
    t.index(['agent_id', 'landline_number']);
  });

  // The outbox: written in the transaction of the change; the webhook worker delivers from it.
  await knex.schema.createTable('events', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').nullable().references('agents.id').onDelete('SET NULL');
    t.text('type').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['organization_id', 'created_at']);
    t.index(['agent_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('contacts');
  await knex.schema.dropTable('tools');
}
