import type { Knex } from 'knex';

/**
 * Finds the stored call.completed bodies of given calls without reading all events: an erasure
 * redacts the bodies of the person's calls, whether or not the body names them in its text.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX events_call_id
    ON events (organization_id, ((payload->'call'->>'id'))) WHERE type = 'call.completed'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS events_call_id');
}
