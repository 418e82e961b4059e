import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');

  await knex.schema.createTable('organizations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.boolean('auto_delete_done_calls').notNullable().defaultTo(false);
    t.specificType('notdienst_bereiche', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE organizations ADD CONSTRAINT organizations_name_length CHECK (char_length(name) BETWEEN 1 AND 255)`,
  );

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('email').notNullable().unique();
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('memberships', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'organization_id']);
    t.index(['organization_id']);
  });
  await knex.raw(
    `ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('developer_admin', 'admin', 'member'))`,
  );

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('created_by').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('key_prefix').notNullable();
    t.specificType('permissions', 'text[]').notNullable().defaultTo('{}');
    t.specificType('allowed_agent_ids', 'uuid[]').nullable();
    t.integer('rate_limit_per_minute').notNullable().defaultTo(60);
    t.integer('rate_limit_per_hour').notNullable().defaultTo(1000);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['organization_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE api_keys
    ADD CONSTRAINT api_keys_hash_format CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT api_keys_rate_limits_positive CHECK (rate_limit_per_minute > 0 AND rate_limit_per_hour > 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('memberships');
  await knex.schema.dropTable('users');
  await knex.schema.dropTable('organizations');
}
