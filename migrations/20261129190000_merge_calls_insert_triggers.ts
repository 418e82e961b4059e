import type { Knex } from 'knex';

/**
 * One AFTER INSERT trigger on calls instead of four (call_keys, day counts, hour statistics and
 * outcome statistics, each a statement trigger of its own). Every call intake inserts one row, and
 * each trigger costs its own function call and, per counter row, a nested function call of its own
 * (`apply_call_*`); here each counter is one INSERT ... ON CONFLICT of the grouped new rows. What is
 * counted is unchanged:
 * - call_keys is filled first, so a repeated call_id fails before any counter row is locked.
 * - Counter rows are still changed in key order (ORDER BY), so two statements never wait on each
 *   other crosswise.
 * - The outcome statistics still take the agents' shared advisory locks, in agent order, before a
 *   statement of their own reads the counted fields (the rebuild on agents takes them exclusively).
 *   New rows that all have empty extracted_data count under no outcome, whatever the fields are: they
 *   need neither the lock nor the read.
 * The update and delete triggers stay as they were. The functions of the four old insert triggers
 * stay too (count_calls_by_day serves update and delete as well): `down` puts the triggers back on them.
 */
const OLD_TRIGGERS = [
  ['calls_count_insert', 'count_calls_by_day'],
  ['calls_hour_insert', 'count_calls_by_hour_insert'],
  ['calls_keys_insert', 'call_keys_insert'],
  ['calls_outcomes_insert', 'count_call_outcomes_insert'],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION calls_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO call_keys (agent_id, call_id) SELECT agent_id, call_id FROM new_rows;
      INSERT INTO call_day_counts AS c (agent_id, organization_id, day, done, deleted, calls)
      SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date, done, deleted_at IS NOT NULL, count(*)
        FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
      ON CONFLICT (agent_id, day, done, deleted) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
      INSERT INTO call_hour_stats AS s (agent_id, organization_id, hour, done, deleted, calls, duration_total)
      SELECT agent_id, organization_id, date_trunc('hour', created_at, 'UTC'), done, deleted_at IS NOT NULL,
             count(*), sum(duration)
        FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
      ON CONFLICT (agent_id, hour, done, deleted)
      DO UPDATE SET calls = s.calls + EXCLUDED.calls, duration_total = s.duration_total + EXCLUDED.duration_total;
      IF NOT EXISTS (SELECT 1 FROM new_rows WHERE extracted_data <> '{}'::jsonb) THEN RETURN NULL; END IF;
      PERFORM pg_advisory_xact_lock_shared(hashtextextended('call_outcomes:' || lower(agent_id::text), 0))
         FROM (SELECT DISTINCT agent_id FROM new_rows ORDER BY 1) x;
      -- A new statement: it reads the definition as it is once the locks are held.
      INSERT INTO call_outcome_hour_stats AS s (agent_id, organization_id, name, value, hour, deleted, calls,
                                                done_calls, duration_total, done_duration_total)
      SELECT r.agent_id, r.organization_id, k.name, r.extracted_data -> k.name, date_trunc('hour', r.created_at, 'UTC'),
             r.deleted_at IS NOT NULL, count(*), count(*) FILTER (WHERE r.done), sum(r.duration),
             coalesce(sum(r.duration) FILTER (WHERE r.done), 0)
        FROM new_rows r
        JOIN (SELECT a.id AS agent_id, unnest(counted_outcome_names(a.analysis_fields)) AS name
                FROM agents a WHERE a.id IN (SELECT agent_id FROM new_rows)) k ON k.agent_id = r.agent_id
       WHERE r.extracted_data \\? k.name
       GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 4, 5, 6
      ON CONFLICT (agent_id, name, value, hour, deleted)
      DO UPDATE SET calls = s.calls + EXCLUDED.calls, done_calls = s.done_calls + EXCLUDED.done_calls,
                    duration_total = s.duration_total + EXCLUDED.duration_total,
                    done_duration_total = s.done_duration_total + EXCLUDED.done_duration_total;
      RETURN NULL;
    END $$`);
  for (const [trigger] of OLD_TRIGGERS) await knex.raw(`DROP TRIGGER ${trigger} ON calls`);
  await knex.raw(`CREATE TRIGGER calls_insert AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION calls_after_insert()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER calls_insert ON calls`);
  await knex.raw(`DROP FUNCTION calls_after_insert()`);
  for (const [trigger, fn] of OLD_TRIGGERS)
    await knex.raw(`CREATE TRIGGER ${trigger} AFTER INSERT ON calls REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`);
}
