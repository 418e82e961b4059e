import type { Knex } from 'knex';

/**
 * Agent templates: a bundle (see the agent-bundles module) whose strings may hold {{placeholders}},
 * and the variables it declares. Organization-level; a name is unique within the organization.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agent_templates', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description').nullable();
    t.jsonb('variables').notNullable().defaultTo('[]');
    t.jsonb('bundle').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['organization_id', 'name'], { indexName: 'agent_templates_organization_name_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_templates');
}
