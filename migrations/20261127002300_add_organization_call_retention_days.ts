import type { Knex } from 'knex';

/** How long calls keep their personal data in the organization; an agent's retention_days overrides it. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE organizations
    ADD COLUMN call_retention_days integer NOT NULL DEFAULT 90,
    ADD CONSTRAINT organizations_call_retention_days CHECK (call_retention_days BETWEEN 1 AND 3650)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE organizations DROP COLUMN call_retention_days');
}
