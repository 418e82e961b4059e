import type { Knex } from 'knex';
import { addNewRows, callsAfterInsert, DAYS, HOURS } from './20261130040000_count_call_outcomes_by_day.js';

/**
 * The calls' total duration beside their number in call_day_counts (per agent, UTC day, done and
 * trashed state), so that statistics of day, week and month buckets read day rows for the whole
 * UTC days and hour rows only for the hours a zone puts in another bucket, as the outcome counters
 * do (20261130040000): a year by day in Berlin read the 17,500 hour rows of call_hour_stats, now
 * about 730 day rows and 730 hour rows (the UTC hours 22 and 23 of each day), found by their UTC hour
 * of the day (the index below; its expression is repeated in call-stats.repository.ts).
 * - calls_after_insert adds the new rows' durations to the day rows as it adds their number;
 * - update and delete: count_call_days (the triggers calls_count_update and calls_count_delete,
 *   same names, so same order among the triggers) applies number and duration per day; the
 *   function count_calls_by_day stays as it was for 20261129190000's `down`.
 * Day rows are still changed before hour rows, in key order, by every statement.
 */
const HOUR_OF_DAY = `(extract(hour FROM hour AT TIME ZONE 'UTC'))::integer`;

const DAY_COUNTS = `INSERT INTO call_day_counts AS c (agent_id, organization_id, day, done, deleted, calls, duration_total)
      SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date, done, deleted_at IS NOT NULL, count(*),
             sum(duration)
        FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
      ON CONFLICT (agent_id, day, done, deleted)
      DO UPDATE SET calls = c.calls + EXCLUDED.calls, duration_total = c.duration_total + EXCLUDED.duration_total;`;

/** The changed calls' rows in `table`, signed: number and duration per day. */
const ROW = (sign: string, table: string) =>
  `SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date AS day, done,
          deleted_at IS NOT NULL AS deleted, ${sign}1 AS n, ${sign}duration AS duration FROM ${table}`;

const TRIGGERS = [
  ['delete', 'OLD TABLE AS old_rows', [ROW('-', 'old_rows')]],
  ['update', 'OLD TABLE AS old_rows NEW TABLE AS new_rows', [ROW('', 'new_rows'), ROW('-', 'old_rows')]],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE call_day_counts ADD COLUMN duration_total double precision NOT NULL DEFAULT 0`);
  // Without the figures: an intake's update of its hour row changes no indexed column and stays a
  // HOT update (the hour rows of a year's hours 22 and 23 are then read from the table, 1,138 of them).
  await knex.raw(`CREATE INDEX call_hour_stats_by_hour_of_day ON call_hour_stats (agent_id, (${HOUR_OF_DAY}), hour)`);
  await knex.raw(`
    CREATE FUNCTION apply_call_day_stat(p_agent uuid, p_org uuid, p_day date, p_done boolean, p_deleted boolean,
                                        p_calls bigint, p_duration double precision)
      RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      IF p_calls > 0 THEN
        INSERT INTO call_day_counts AS c (agent_id, organization_id, day, done, deleted, calls, duration_total)
        VALUES (p_agent, p_org, p_day, p_done, p_deleted, p_calls, p_duration)
        ON CONFLICT (agent_id, day, done, deleted)
        DO UPDATE SET calls = c.calls + EXCLUDED.calls, duration_total = c.duration_total + EXCLUDED.duration_total;
      ELSE
        -- A vanished row belongs to an agent being deleted: nothing left to count.
        UPDATE call_day_counts SET calls = calls + p_calls, duration_total = duration_total + p_duration
         WHERE agent_id = p_agent AND day = p_day AND done = p_done AND deleted = p_deleted;
      END IF;
    END $$`);
  for (const [op, transition, rows] of TRIGGERS)
    await knex.raw(`
      CREATE FUNCTION count_call_days_${op}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE d record;
      BEGIN
        FOR d IN SELECT agent_id, organization_id, day, done, deleted, sum(n) AS n, sum(duration) AS duration
                   FROM (${rows.join(' UNION ALL ')}) x
                  GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(duration) <> 0 ORDER BY 1, 3, 4, 5
        LOOP PERFORM apply_call_day_stat(d.agent_id, d.organization_id, d.day, d.done, d.deleted, d.n, d.duration); END LOOP;
        RETURN NULL;
      END $$;
      DROP TRIGGER calls_count_${op} ON calls;
      CREATE TRIGGER calls_count_${op} AFTER ${op.toUpperCase()} ON calls REFERENCING ${transition}
        FOR EACH STATEMENT EXECUTE FUNCTION count_call_days_${op}()`);
  await knex.raw(callsAfterInsert(addNewRows(HOURS) + addNewRows(DAYS), DAY_COUNTS));
  // The durations so far from the hour rows, summed per day while no statement can change them.
  await knex.raw(`LOCK TABLE calls IN SHARE MODE`);
  await knex.raw(`
    UPDATE call_day_counts d SET duration_total = s.duration
      FROM (SELECT agent_id, (hour AT TIME ZONE 'UTC')::date AS day, done, deleted, sum(duration_total) AS duration
              FROM call_hour_stats GROUP BY 1, 2, 3, 4) s
     WHERE d.agent_id = s.agent_id AND d.day = s.day AND d.done = s.done AND d.deleted = s.deleted`);
  // Statistics read the day rows by agent and day range now: planned from fresh statistics.
  await knex.raw(`ANALYZE call_day_counts`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(callsAfterInsert(addNewRows(HOURS) + addNewRows(DAYS)));
  for (const [op, transition] of TRIGGERS)
    await knex.raw(`
      DROP TRIGGER calls_count_${op} ON calls;
      CREATE TRIGGER calls_count_${op} AFTER ${op.toUpperCase()} ON calls REFERENCING ${transition}
        FOR EACH STATEMENT EXECUTE FUNCTION count_calls_by_day();
      DROP FUNCTION count_call_days_${op}()`);
  await knex.raw(`DROP FUNCTION apply_call_day_stat(uuid, uuid, date, boolean, boolean, bigint, double precision)`);
  await knex.raw(`DROP INDEX call_hour_stats_by_hour_of_day`);
  await knex.raw(`ALTER TABLE call_day_counts DROP COLUMN duration_total`);
}
