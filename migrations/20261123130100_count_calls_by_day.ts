import type { Knex } from 'knex';

/**
 * Exact call counts without counting rows: per agent, UTC day, done and trashed state, kept by
 * statement-level triggers (one aggregate per statement, so a bulk insert costs one pass). A list
 * total sums these rows (a few hundred per agent and year) plus an index count of the partial days
 * at the edges of a from/to range.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE call_day_counts (
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      organization_id uuid NOT NULL,
      day date NOT NULL,
      done boolean NOT NULL,
      deleted boolean NOT NULL,
      calls bigint NOT NULL,
      PRIMARY KEY (agent_id, day, done, deleted)
    );

    -- Rows are changed in key order, so two statements never wait on each other crosswise.
    CREATE FUNCTION apply_call_day_count(p_agent uuid, p_org uuid, p_day date, p_done boolean, p_deleted boolean,
                                          p_delta bigint) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF p_delta > 0 THEN
        INSERT INTO call_day_counts AS c (agent_id, organization_id, day, done, deleted, calls)
        VALUES (p_agent, p_org, p_day, p_done, p_deleted, p_delta)
        ON CONFLICT (agent_id, day, done, deleted) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
      ELSE
        -- A vanished row belongs to an agent being deleted: nothing left to count.
        UPDATE call_day_counts SET calls = calls + p_delta
         WHERE agent_id = p_agent AND day = p_day AND done = p_done AND deleted = p_deleted;
      END IF;
    END $$;

    CREATE FUNCTION count_calls_by_day() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE d record;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        FOR d IN SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date AS day, done,
                        deleted_at IS NOT NULL AS deleted, count(*) AS delta
                   FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
        LOOP PERFORM apply_call_day_count(d.agent_id, d.organization_id, d.day, d.done, d.deleted, d.delta); END LOOP;
      ELSIF TG_OP = 'DELETE' THEN
        FOR d IN SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date AS day, done,
                        deleted_at IS NOT NULL AS deleted, -count(*) AS delta
                   FROM old_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
        LOOP PERFORM apply_call_day_count(d.agent_id, d.organization_id, d.day, d.done, d.deleted, d.delta); END LOOP;
      ELSE
        FOR d IN SELECT agent_id, organization_id, day, done, deleted, sum(delta) AS delta FROM (
                   SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date AS day, done,
                          deleted_at IS NOT NULL AS deleted, 1 AS delta FROM new_rows
                   UNION ALL
                   SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date, done,
                          deleted_at IS NOT NULL, -1 FROM old_rows
                 ) x GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 3, 4, 5
        LOOP PERFORM apply_call_day_count(d.agent_id, d.organization_id, d.day, d.done, d.deleted, d.delta); END LOOP;
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER calls_count_insert AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION count_calls_by_day();
    CREATE TRIGGER calls_count_delete AFTER DELETE ON calls REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION count_calls_by_day();
    CREATE TRIGGER calls_count_update AFTER UPDATE ON calls REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION count_calls_by_day();
  `);
  // Existing calls, counted while no one can change them.
  await knex.raw(`LOCK TABLE calls IN SHARE MODE`);
  await knex.raw(`
    INSERT INTO call_day_counts (agent_id, organization_id, day, done, deleted, calls)
    SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date, done, deleted_at IS NOT NULL, count(*)
      FROM calls GROUP BY 1, 2, 3, 4, 5
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER calls_count_update ON calls;
    DROP TRIGGER calls_count_delete ON calls;
    DROP TRIGGER calls_count_insert ON calls;
    DROP FUNCTION count_calls_by_day();
    DROP FUNCTION apply_call_day_count(uuid, uuid, date, boolean, boolean, bigint);
    DROP TABLE call_day_counts;
  `);
}
