import type { Knex } from 'knex';

/**
 * TalkPilot's contact fields: how the name parts came about (name_parsed), who maintains the name
 * (name_source), and last_contact_date as a moment instead of a day (a stored day becomes its
 * midnight UTC).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contacts', (t) => {
    t.text('name_parsed').notNullable().defaultTo('unclear');
    t.text('name_source').notNullable().defaultTo('manual');
  });
  await knex.raw(`UPDATE contacts SET name_parsed = 'auto' WHERE first_name IS NOT NULL OR last_name IS NOT NULL`);
  await knex.raw(`ALTER TABLE contacts
    ADD CONSTRAINT contacts_name_parsed CHECK (name_parsed IN ('auto', 'llm', 'manual', 'unclear')),
    ADD CONSTRAINT contacts_name_source CHECK (name_source IN ('ai', 'manual')),
    ALTER COLUMN last_contact_date TYPE timestamptz USING (last_contact_date::timestamp AT TIME ZONE 'UTC')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE contacts
    ALTER COLUMN last_contact_date TYPE date USING ((last_contact_date AT TIME ZONE 'UTC')::date)`);
  await knex.schema.alterTable('contacts', (t) => {
    t.dropColumn('name_source');
    t.dropColumn('name_parsed');
  });
}
