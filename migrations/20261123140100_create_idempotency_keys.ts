import type { Knex } from 'knex';

/**
 * `Idempotency-Key` records: one per credential and key, holding the request's fingerprint and, once
 * the first request finished, its response to replay. Kept 24 hours (expires_at), then deleted by a
 * scheduled job.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    // 'key:<api key id>' or 'user:<user id>': keys of different credentials never meet.
    t.text('credential').notNullable();
    t.text('idempotency_key').notNullable();
    t.uuid('organization_id').nullable().references('organizations.id').onDelete('CASCADE');
    t.text('fingerprint').notNullable();
    t.text('state').notNullable();
    t.integer('response_status').nullable();
    t.text('response_content_type').nullable();
    t.text('response_location').nullable();
    t.text('response_body').nullable();
    t.timestamp('locked_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['credential', 'idempotency_key']);
    t.index(['expires_at']);
    t.index(['organization_id']);
  });
  await knex.raw(`ALTER TABLE idempotency_keys
    ADD CONSTRAINT idempotency_keys_state CHECK (state IN ('running', 'done'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
