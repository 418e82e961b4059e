import type { Knex } from 'knex';

/** The webhook sweeper looks for events never turned into deliveries; they are few, so a partial index. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX events_undispatched_idx ON events (created_at) WHERE dispatched_at IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS events_undispatched_idx`);
}
