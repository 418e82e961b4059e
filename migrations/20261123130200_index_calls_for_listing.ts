import type { Knex } from 'knex';

/**
 * The call list reads newest first, usually without the trash: a partial index in exactly that
 * order serves page 1, deep pages (ids only: an index-only scan, the organization is in the index
 * too) and the keyset cursor; a second one serves
 * the `done` filter without walking past the other half.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX calls_list_live ON calls (agent_id, created_at DESC, id DESC) INCLUDE (organization_id)
      WHERE deleted_at IS NULL;
    CREATE INDEX calls_list_done ON calls (agent_id, done, created_at DESC, id DESC) INCLUDE (organization_id, deleted_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX calls_list_done; DROP INDEX calls_list_live;`);
}
