import type { Knex } from 'knex';

/** Call records reported by the telephony layer; personal data is purged after the agent's retention. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('calls', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('call_id').notNullable();
    t.text('customer_name').nullable();
    t.text('customer_request').nullable();
    t.text('phone_number').nullable();
    t.double('duration').notNullable();
    t.boolean('done').notNullable().defaultTo(false);
    t.boolean('general_success').nullable();
    t.text('disconnection_reason').nullable();
    t.text('call_summary').nullable();
    t.jsonb('transcript').nullable();
    // The employees table belongs to another migration; the foreign key is added once both exist.
    t.uuid('employee_id').nullable();
    t.text('note').nullable();
    t.boolean('is_purged').notNullable().defaultTo(false);
    t.timestamp('purged_at', { useTz: true }).nullable();
    t.timestamp('deleted_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['agent_id', 'call_id']);
    t.index(['agent_id', 'created_at', 'id']);
    t.index(['agent_id', 'phone_number', 'created_at']);
  });
  await knex.raw(`ALTER TABLE calls ADD CONSTRAINT calls_duration CHECK (duration >= 0)`);
  await knex.raw(`CREATE INDEX calls_retention ON calls (created_at) WHERE NOT is_purged`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('calls');
}
