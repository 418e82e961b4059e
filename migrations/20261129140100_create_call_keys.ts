import type { Knex } from 'knex';

/**
 * A call_id is unique per agent across all months. The partitioned `calls` can only enforce
 * uniqueness together with its partition key (`created_at`), so the pair lives in a table of its
 * own, filled by a statement trigger on every insert into calls (bulk inserts included) and
 * emptied with the calls it belongs to. A repeated call_id fails the insert with a unique
 * violation of `call_keys_pkey`, which the intake answers as "already stored".
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE call_keys (
    agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    call_id text NOT NULL,
    PRIMARY KEY (agent_id, call_id))`);
  await knex.raw(`INSERT INTO call_keys (agent_id, call_id) SELECT agent_id, call_id FROM calls`);
  // The per-month unique key (with created_at) says less than call_keys: a plain index for lookups.
  await knex.raw(`ALTER TABLE calls DROP CONSTRAINT calls_agent_id_call_id_unique`);
  await knex.raw(`CREATE INDEX calls_agent_id_call_id ON calls (agent_id, call_id)`);
  await knex.raw(`CREATE FUNCTION call_keys_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO call_keys (agent_id, call_id) SELECT agent_id, call_id FROM new_rows;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE FUNCTION call_keys_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM call_keys k USING old_rows o WHERE k.agent_id = o.agent_id AND k.call_id = o.call_id;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER calls_keys_insert AFTER INSERT ON calls
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION call_keys_insert()`);
  await knex.raw(`CREATE TRIGGER calls_keys_delete AFTER DELETE ON calls
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION call_keys_delete()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER calls_keys_delete ON calls`);
  await knex.raw(`DROP TRIGGER calls_keys_insert ON calls`);
  await knex.raw(`DROP FUNCTION call_keys_delete()`);
  await knex.raw(`DROP FUNCTION call_keys_insert()`);
  await knex.raw(`DROP TABLE call_keys`);
  await knex.raw(`DROP INDEX calls_agent_id_call_id`);
  await knex.raw(
    `ALTER TABLE calls ADD CONSTRAINT calls_agent_id_call_id_unique UNIQUE (agent_id, call_id, created_at)`,
  );
}
