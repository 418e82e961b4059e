import type { Knex } from 'knex';

/**
 * Exact counts of calls by typed outcome without reading the calls: per agent, outcome field, stored
 * value, UTC hour and trashed state, the number of calls and of done calls and their durations. Kept
 * for the fields that are enum or boolean in the agent's analysis_fields, by statement-level triggers
 * as call_hour_stats is. The key is the value as stored (jsonb), whatever the field's definition was
 * when it was written, so a count is the number of calls whose extracted_data holds that value, the
 * very condition of the list's `extracted.<name>=` filter.
 *
 * Which fields are counted follows the definition: when a change of analysis_fields makes a field
 * counted (a new enum or boolean field, or one that was string, number or date before) its counters
 * are rebuilt from the agent's calls, and when it stops being counted they are dropped (a trigger on
 * agents, in the same transaction). The two never miss each other: the calls triggers take a shared
 * advisory lock per agent before they read the definition, the rebuild an exclusive one before it
 * reads the calls.
 */
const LOCK = `hashtextextended('call_outcomes:' || lower(%s::text), 0)`;
const lockOf = (agent: string) => LOCK.replace('%s', agent);

/** (agent, counted field name) for the agents of the changed rows. */
const COUNTED = (tables: string[]) => `
  counted AS (
    SELECT a.id AS agent_id, unnest(counted_outcome_names(a.analysis_fields)) AS name
      FROM agents a WHERE a.id IN (${tables.map((t) => `SELECT agent_id FROM ${t}`).join(' UNION ')})
  )`;

const ROW = (sign: string, table: string) => `
  SELECT r.agent_id, r.organization_id, k.name, r.extracted_data -> k.name AS value,
         date_trunc('hour', r.created_at, 'UTC') AS hour, r.deleted_at IS NOT NULL AS deleted,
         ${sign}1 AS n, ${sign}(CASE WHEN r.done THEN 1 ELSE 0 END) AS done_n, ${sign}r.duration AS duration,
         ${sign}(CASE WHEN r.done THEN r.duration ELSE 0 END) AS done_duration
    FROM ${table} r JOIN counted k ON k.agent_id = r.agent_id
   WHERE r.extracted_data \\? k.name`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE call_outcome_hour_stats (
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      organization_id uuid NOT NULL,
      name text NOT NULL,
      value jsonb NOT NULL,
      hour timestamptz NOT NULL,
      deleted boolean NOT NULL,
      calls bigint NOT NULL,
      done_calls bigint NOT NULL,
      duration_total double precision NOT NULL,
      done_duration_total double precision NOT NULL,
      PRIMARY KEY (agent_id, name, value, hour, deleted)
    );
    -- A list total reads one value's live hours in order, from the index alone.
    CREATE INDEX call_outcome_hour_stats_totals ON call_outcome_hour_stats (agent_id, name, value, deleted, hour)
      INCLUDE (organization_id, calls, done_calls);

    -- The fields of an agent that are counted: its enum and boolean analysis fields.
    CREATE FUNCTION counted_outcome_names(p_fields jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(array_agg(f->>'name' ORDER BY f->>'name'), '{}')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_fields) = 'array' THEN p_fields ELSE '[]' END) f
       WHERE f->>'type' IN ('enum', 'boolean')
    $$;

    -- Rows are changed in key order, so two statements never wait on each other crosswise.
    CREATE FUNCTION apply_call_outcome_stat(p_agent uuid, p_org uuid, p_name text, p_value jsonb, p_hour timestamptz,
                                            p_deleted boolean, p_calls bigint, p_done bigint,
                                            p_duration double precision, p_done_duration double precision)
      RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF p_calls > 0 THEN
        INSERT INTO call_outcome_hour_stats AS s (agent_id, organization_id, name, value, hour, deleted, calls,
                                                  done_calls, duration_total, done_duration_total)
        VALUES (p_agent, p_org, p_name, p_value, p_hour, p_deleted, p_calls, p_done, p_duration, p_done_duration)
        ON CONFLICT (agent_id, name, value, hour, deleted)
        DO UPDATE SET calls = s.calls + EXCLUDED.calls, done_calls = s.done_calls + EXCLUDED.done_calls,
                      duration_total = s.duration_total + EXCLUDED.duration_total,
                      done_duration_total = s.done_duration_total + EXCLUDED.done_duration_total;
      ELSE
        -- A vanished row belongs to an agent being deleted: nothing left to count.
        UPDATE call_outcome_hour_stats
           SET calls = calls + p_calls, done_calls = done_calls + p_done, duration_total = duration_total + p_duration,
               done_duration_total = done_duration_total + p_done_duration
         WHERE agent_id = p_agent AND name = p_name AND value = p_value AND hour = p_hour AND deleted = p_deleted;
      END IF;
    END $$;

    -- A change of analysis_fields that starts or stops counting a field rebuilds that field's counters.
    CREATE FUNCTION recount_call_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      before_names text[] := counted_outcome_names(OLD.analysis_fields);
      after_names text[] := counted_outcome_names(NEW.analysis_fields);
      added text[] := ARRAY(SELECT unnest(after_names) EXCEPT SELECT unnest(before_names));
      gone text[] := ARRAY(SELECT unnest(before_names) EXCEPT SELECT unnest(after_names));
    BEGIN
      IF cardinality(added) = 0 AND cardinality(gone) = 0 THEN RETURN NULL; END IF;
      -- Every statement on this agent's calls that read the old definition has ended; later ones wait.
      PERFORM pg_advisory_xact_lock(${lockOf('NEW.id')});
      DELETE FROM call_outcome_hour_stats WHERE agent_id = NEW.id AND name = ANY(added || gone);
      INSERT INTO call_outcome_hour_stats (agent_id, organization_id, name, value, hour, deleted, calls, done_calls,
                                           duration_total, done_duration_total)
      SELECT c.agent_id, c.organization_id, k.name, c.extracted_data -> k.name, date_trunc('hour', c.created_at, 'UTC'),
             c.deleted_at IS NOT NULL, count(*), count(*) FILTER (WHERE c.done), sum(c.duration),
             coalesce(sum(c.duration) FILTER (WHERE c.done), 0)
        FROM calls c CROSS JOIN unnest(added) AS k(name)
       WHERE c.agent_id = NEW.id AND c.extracted_data \\? k.name
       GROUP BY 1, 2, 3, 4, 5, 6;
      RETURN NULL;
    END $$;
    CREATE TRIGGER agents_recount_call_outcomes AFTER UPDATE OF analysis_fields ON agents
      FOR EACH ROW WHEN (OLD.analysis_fields IS DISTINCT FROM NEW.analysis_fields)
      EXECUTE FUNCTION recount_call_outcomes();
  `);
  for (const [op, transition, tables, rows] of [
    ['insert', 'NEW TABLE AS new_rows', ['new_rows'], [ROW('', 'new_rows')]],
    ['delete', 'OLD TABLE AS old_rows', ['old_rows'], [ROW('-', 'old_rows')]],
    [
      'update',
      'OLD TABLE AS old_rows NEW TABLE AS new_rows',
      ['new_rows', 'old_rows'],
      [ROW('', 'new_rows'), ROW('-', 'old_rows')],
    ],
  ] as const) {
    await knex.raw(`
      CREATE FUNCTION count_call_outcomes_${op}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE d record;
      BEGIN
        -- Shared, in agent order: statements on calls never wait for each other, only for a rebuild.
        FOR d IN SELECT DISTINCT agent_id FROM (${tables.map((t) => `SELECT agent_id FROM ${t}`).join(' UNION ')}) x ORDER BY 1
        LOOP PERFORM pg_advisory_xact_lock_shared(${lockOf('d.agent_id')}); END LOOP;
        -- A new statement: it reads the definition as it is once the lock is held.
        FOR d IN WITH ${COUNTED([...tables])}
                 SELECT agent_id, organization_id, name, value, hour, deleted, sum(n) AS n, sum(done_n) AS done_n,
                        sum(duration) AS duration, sum(done_duration) AS done_duration
                   FROM (${rows.join(' UNION ALL ')}) x
                  GROUP BY 1, 2, 3, 4, 5, 6
                 HAVING sum(n) <> 0 OR sum(done_n) <> 0 OR sum(duration) <> 0 OR sum(done_duration) <> 0
                  ORDER BY 1, 3, 4, 5, 6
        LOOP
          PERFORM apply_call_outcome_stat(d.agent_id, d.organization_id, d.name, d.value, d.hour, d.deleted, d.n,
                                          d.done_n, d.duration, d.done_duration);
        END LOOP;
        RETURN NULL;
      END $$;
      CREATE TRIGGER calls_outcomes_${op} AFTER ${op.toUpperCase()} ON calls REFERENCING ${transition}
        FOR EACH STATEMENT EXECUTE FUNCTION count_call_outcomes_${op}();
    `);
  }
  // Existing calls, counted while no one can change them or the fields.
  await knex.raw(`LOCK TABLE agents, calls IN SHARE MODE`);
  await knex.raw(`
    INSERT INTO call_outcome_hour_stats (agent_id, organization_id, name, value, hour, deleted, calls, done_calls,
                                         duration_total, done_duration_total)
    SELECT c.agent_id, c.organization_id, k.name, c.extracted_data -> k.name, date_trunc('hour', c.created_at, 'UTC'),
           c.deleted_at IS NOT NULL, count(*), count(*) FILTER (WHERE c.done), sum(c.duration),
           coalesce(sum(c.duration) FILTER (WHERE c.done), 0)
      FROM (SELECT a.id AS agent_id, unnest(counted_outcome_names(a.analysis_fields)) AS name FROM agents a) k
      JOIN calls c ON c.agent_id = k.agent_id AND c.extracted_data \\? k.name
     GROUP BY 1, 2, 3, 4, 5, 6
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER calls_outcomes_update ON calls;
    DROP TRIGGER calls_outcomes_delete ON calls;
    DROP TRIGGER calls_outcomes_insert ON calls;
    DROP TRIGGER agents_recount_call_outcomes ON agents;
    DROP FUNCTION count_call_outcomes_update();
    DROP FUNCTION count_call_outcomes_delete();
    DROP FUNCTION count_call_outcomes_insert();
    DROP FUNCTION recount_call_outcomes();
    DROP FUNCTION apply_call_outcome_stat(uuid, uuid, text, jsonb, timestamptz, boolean, bigint, bigint,
                                          double precision, double precision);
    DROP FUNCTION counted_outcome_names(jsonb);
    DROP TABLE call_outcome_hour_stats;
  `);
}
