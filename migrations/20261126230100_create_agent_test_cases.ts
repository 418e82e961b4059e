import type { Knex } from 'knex';

/**
 * Saved call-simulation cases of an agent, and the agent switch that makes every configuration
 * write pass them. The per-agent limit (200) is held by the service under the agent's row lock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_test_cases', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.jsonb('input').notNullable();
    t.jsonb('expect').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  // Cases list and run in the order they were saved, even when two share a timestamp.
  await knex.raw('ALTER TABLE agent_test_cases ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY');
  await knex.raw('CREATE INDEX agent_test_cases_agent_seq ON agent_test_cases (agent_id, seq)');
  await knex.schema.alterTable('agents', (t) => {
    t.boolean('require_passing_test_cases').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('require_passing_test_cases');
  });
  await knex.schema.dropTable('agent_test_cases');
}
