import type { Knex } from 'knex';

/** Which kinds of personal data call intake replaces with placeholders for this agent (none by default). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE agents ADD COLUMN redact_pii text[] NOT NULL DEFAULT '{}'::text[]`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE agents DROP COLUMN redact_pii');
}
