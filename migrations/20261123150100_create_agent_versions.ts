import type { Knex } from 'knex';

/**
 * Immutable configuration versions of an agent: the full configuration after each change, numbered
 * per agent. The counter row is what serialises two changes of one agent (its own row lock, so it
 * never has to upgrade a lock another statement holds on the agent row).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_version_counters', (t) => {
    t.uuid('agent_id').primary().references('agents.id').onDelete('CASCADE');
    t.integer('last_version').notNullable();
  });
  await knex.schema.createTable('agent_versions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.jsonb('configuration').notNullable();
    t.text('change').notNullable();
    t.integer('restored_from').nullable();
    t.text('actor_type').notNullable();
    t.uuid('actor_user_id').nullable();
    t.text('actor_key_prefix').nullable();
    t.text('request_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['agent_id', 'version']);
  });
  await knex.raw(`ALTER TABLE agent_versions
    ADD CONSTRAINT agent_versions_actor_type CHECK (actor_type IN ('user', 'api_key'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_versions');
  await knex.schema.dropTable('agent_version_counters');
}
