import type { Knex } from 'knex';

/**
 * One row per write through the API: route, resource, actor, request id. No bodies: nothing a
 * caller sent (personal data, secrets) is stored here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    // No foreign key: the entry of an agent's deletion outlives the agent.
    t.uuid('agent_id').nullable();
    t.text('action').notNullable();
    t.text('method').notNullable();
    t.text('route').notNullable();
    t.text('resource_type').notNullable();
    t.text('resource_id').nullable();
    t.text('actor_type').notNullable();
    t.uuid('actor_user_id').nullable();
    t.text('actor_key_prefix').nullable();
    t.text('request_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['organization_id', 'created_at', 'id']);
    t.index(['organization_id', 'agent_id', 'created_at']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
}
