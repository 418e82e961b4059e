import type { Knex } from 'knex';

/**
 * Outgoing webhooks: each member's own webhook URL, the per-organization signing secret, the
 * outbox marker on events, and the delivery log (one delivery per event and target, one row per
 * attempt).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.text('webhook_url').nullable();
  });

  // Set in the transaction that created the event's deliveries: a re-run of the dispatch job is a no-op.
  await knex.schema.alterTable('events', (t) => {
    t.timestamp('dispatched_at', { useTz: true }).nullable();
  });

  // Readable on purpose: signing needs the secret itself, so it cannot be hashed.
  await knex.schema.createTable('organization_webhook_secrets', (t) => {
    t.uuid('organization_id').primary().references('organizations.id').onDelete('CASCADE');
    t.text('secret').notNullable();
    t.text('previous_secret').nullable();
    t.timestamp('previous_secret_expires_at', { useTz: true }).nullable();
    t.timestamp('rotated_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE organization_webhook_secrets
    ADD CONSTRAINT organization_webhook_secrets_format CHECK (secret ~ '^whsec_[A-Za-z0-9+/=]+$')`);

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').nullable().references('agents.id').onDelete('CASCADE');
    t.uuid('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.text('event_type').notNullable();
    t.text('target_kind').notNullable();
    t.text('target_url').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.timestamp('last_attempt_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['event_id', 'target_url']);
    t.index(['agent_id', 'created_at', 'id']);
    t.index(['organization_id']);
  });
  await knex.raw(`ALTER TABLE webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_status CHECK (status IN ('pending', 'succeeded', 'failed')),
    ADD CONSTRAINT webhook_deliveries_target_kind CHECK (target_kind IN ('agent', 'member'))`);

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    // The queue job that made the attempt: a job re-run after its worker died never records twice.
    t.uuid('job_id').notNullable().unique();
    t.integer('attempt_number').notNullable();
    t.text('trigger').notNullable();
    t.text('status').notNullable();
    t.integer('http_status').nullable();
    t.integer('duration_ms').notNullable();
    t.text('error').nullable();
    t.timestamp('attempted_at', { useTz: true }).notNullable();
    t.unique(['delivery_id', 'attempt_number']);
  });
  await knex.raw(`ALTER TABLE webhook_delivery_attempts
    ADD CONSTRAINT webhook_delivery_attempts_status CHECK (status IN ('succeeded', 'failed')),
    ADD CONSTRAINT webhook_delivery_attempts_trigger CHECK (trigger IN ('event', 'redelivery'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_delivery_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('organization_webhook_secrets');
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('dispatched_at');
  });
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('webhook_url');
  });
}
