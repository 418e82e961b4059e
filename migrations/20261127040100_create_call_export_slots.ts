import type { Knex } from 'knex';

/**
 * Running call exports, shared by every instance: per caller (API key or dashboard user) at most
 * EXPORTS_PER_KEY slots. A slot is a lease: the export renews it while it runs and deletes it when it
 * ends; a slot whose instance died is free again once its lease has run out.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE call_export_slots (
      caller text NOT NULL,
      slot smallint NOT NULL,
      holder uuid NOT NULL,
      lease_until timestamptz NOT NULL,
      PRIMARY KEY (caller, slot)
    )
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE call_export_slots');
}
