import type { Knex } from 'knex';

/**
 * Opt-in webhook retries. The agent's `post_call_webhook_retries` and the member's
 * `webhook_retries` (both false: the spec's "no retry" stays the default); each delivery records
 * whether it retries as its target's setting was when the event was dispatched, which automatic
 * retry it waits for next (`next_retry`, 1..7) and when. Attempts may now be `retry`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents ADD COLUMN post_call_webhook_retries boolean NOT NULL DEFAULT false');
  await knex.raw('ALTER TABLE users ADD COLUMN webhook_retries boolean NOT NULL DEFAULT false');
  await knex.raw(`ALTER TABLE webhook_deliveries
    ADD COLUMN retries boolean NOT NULL DEFAULT false,
    ADD COLUMN next_retry smallint NULL,
    ADD COLUMN next_retry_at timestamptz NULL`);
  await knex.raw(`ALTER TABLE webhook_delivery_attempts
    DROP CONSTRAINT webhook_delivery_attempts_trigger,
    ADD CONSTRAINT webhook_delivery_attempts_trigger CHECK (trigger IN ('event', 'redelivery', 'retry'))`);
}

export async function down(knex: Knex): Promise<void> {
  // Numbering stays gapless: an automatic retry reads as a redelivery once retries are gone.
  await knex.raw(`UPDATE webhook_delivery_attempts SET trigger = 'redelivery' WHERE trigger = 'retry'`);
  await knex.raw(`ALTER TABLE webhook_delivery_attempts
    DROP CONSTRAINT webhook_delivery_attempts_trigger,
    ADD CONSTRAINT webhook_delivery_attempts_trigger CHECK (trigger IN ('event', 'redelivery'))`);
  await knex.raw(`ALTER TABLE webhook_deliveries
    DROP COLUMN next_retry_at, DROP COLUMN next_retry, DROP COLUMN retries`);
  await knex.raw('ALTER TABLE users DROP COLUMN webhook_retries');
  await knex.raw('ALTER TABLE agents DROP COLUMN post_call_webhook_retries');
}
