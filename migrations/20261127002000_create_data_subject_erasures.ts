import type { Knex } from 'knex';

/**
 * Erasures of a data subject (DSGVO Art. 17): one row per erasure with its counts so far. A running
 * erasure carries a keyed hash of the person's identifier, so the next request for the same person
 * resumes it (same id); the hash is cleared when it completes. The identifier itself is never stored.
 * The expression index finds the stored webhook bodies of a caller's calls without reading all events.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('data_subject_erasures', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('subject_hash').nullable();
    t.integer('contacts').notNullable().defaultTo(0);
    t.integer('calls').notNullable().defaultTo(0);
    t.integer('webhook_deliveries').notNullable().defaultTo(0);
    t.integer('idempotency_records').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['organization_id', 'created_at']);
  });
  await knex.raw(`CREATE UNIQUE INDEX data_subject_erasures_running
    ON data_subject_erasures (organization_id, subject_hash) WHERE completed_at IS NULL`);
  await knex.raw(`CREATE INDEX events_call_phone_number
    ON events (organization_id, ((payload->'call'->>'phone_number'))) WHERE type = 'call.completed'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS events_call_phone_number');
  await knex.schema.dropTable('data_subject_erasures');
}
