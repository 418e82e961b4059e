import type { Knex } from 'knex';

/**
 * Which event types each receiving URL wants. The defaults are what each URL received before the
 * choice existed: the agent's URL gets call.completed, a member's URL employee.forwarding_created.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE agents
    ADD COLUMN post_call_webhook_events text[] NOT NULL DEFAULT ARRAY['call.completed']::text[]`);
  await knex.raw(`ALTER TABLE users
    ADD COLUMN webhook_events text[] NOT NULL DEFAULT ARRAY['employee.forwarding_created']::text[]`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE users DROP COLUMN webhook_events');
  await knex.raw('ALTER TABLE agents DROP COLUMN post_call_webhook_events');
}
