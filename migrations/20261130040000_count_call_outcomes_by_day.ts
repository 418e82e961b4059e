import type { Knex } from 'knex';

/**
 * Outcome counters per UTC day beside the hourly ones (call_outcome_hour_stats): the same columns,
 * key and rules, with `day` (the UTC date of the calls' hour) instead of `hour`. A day row is always
 * the sum of that day's hour rows: every change of hour rows is applied to their day rows in the
 * same statement, and always after them (all hour rows first, then all day rows, each in key
 * order), so two statements never wait on each other crosswise. Applying each hour delta's day
 * delta right after it (in apply_call_outcome_stat) would not do: a statement changing two hours of
 * one day would hold the day row while it waits for the second hour row, which an intake in that
 * hour holds while it waits for the day row.
 * - calls_after_insert (intake) adds the grouped new rows to the day rows after the hour rows;
 * - update and delete of calls: a statement trigger of its own (calls_outcomes_<op>_days) applies the
 *   deltas per day after calls_outcomes_<op> (triggers of one event fire in the order of their
 *   names) applied them per hour, under the agents' shared locks that one took;
 * - recount_call_outcomes (a field starts or stops being counted) rebuilds the field's day rows as
 *   it rebuilds its hour rows.
 * A year of statistics grouped by an outcome then reads about one row per value and day instead of
 * 24, and a list's outcome total the days between its partial days (call.repository.ts,
 * `outcomeTotal`). Statistics in a zone with an offset from UTC still need the hours of each day that
 * the zone puts into another bucket (in Berlin the last one or two UTC hours of every day,
 * call-stats.repository.ts, `outcomeRows`): the hour rows get an index by UTC hour of the day in
 * place of call_outcome_hour_stats_totals, whose one reader was the list's total over every hour
 * of the range. The index's expression is repeated in HOUR_OF_DAY there.
 */
const HOUR_OF_DAY = `(extract(hour FROM hour AT TIME ZONE 'UTC'))::integer`;
const dayOf = (instant: string) => `(${instant} AT TIME ZONE 'UTC')::date`;

const FIGURES = 'calls, done_calls, duration_total, done_duration_total';
const ADD_FIGURES = `calls = s.calls + EXCLUDED.calls, done_calls = s.done_calls + EXCLUDED.done_calls,
                     duration_total = s.duration_total + EXCLUDED.duration_total,
                     done_duration_total = s.done_duration_total + EXCLUDED.done_duration_total`;

/** The outcome counters of one table: its time column, the bucket of a call's created_at, its key order. */
type Counters = { table: string; column: string; bucket: (createdAt: string) => string; order: string };
export const HOURS: Counters = {
  table: 'call_outcome_hour_stats',
  column: 'hour',
  bucket: (at) => `date_trunc('hour', ${at}, 'UTC')`,
  order: 'agent_id, name, value, hour, deleted',
};
export const DAYS: Counters = {
  table: 'call_outcome_day_stats',
  column: 'day',
  bucket: dayOf,
  order: 'agent_id, name, value, deleted, day',
};

/** The new calls' counted outcomes added to `c` (calls_after_insert, after the shared locks). */
export const addNewRows = (c: Counters) => `
      INSERT INTO ${c.table} AS s (agent_id, organization_id, name, value, ${c.column}, deleted, ${FIGURES})
      SELECT r.agent_id, r.organization_id, k.name, r.extracted_data -> k.name, ${c.bucket('r.created_at')},
             r.deleted_at IS NOT NULL, count(*), count(*) FILTER (WHERE r.done), sum(r.duration),
             coalesce(sum(r.duration) FILTER (WHERE r.done), 0)
        FROM new_rows r
        JOIN (SELECT a.id AS agent_id, unnest(counted_outcome_names(a.analysis_fields)) AS name
                FROM agents a WHERE a.id IN (SELECT agent_id FROM new_rows)) k ON k.agent_id = r.agent_id
       WHERE r.extracted_data \\? k.name
       GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY ${c === HOURS ? '1, 3, 4, 5, 6' : '1, 3, 4, 6, 5'}
      ON CONFLICT (${c.order}) DO UPDATE SET ${ADD_FIGURES};`;

/** calls_after_insert's day counts, as 20261129190000 made them (20261130050000 adds the duration). */
const DAY_COUNTS = `INSERT INTO call_day_counts AS c (agent_id, organization_id, day, done, deleted, calls)
      SELECT agent_id, organization_id, (created_at AT TIME ZONE 'UTC')::date, done, deleted_at IS NOT NULL, count(*)
        FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5
      ON CONFLICT (agent_id, day, done, deleted) DO UPDATE SET calls = c.calls + EXCLUDED.calls;`;

/**
 * calls_after_insert with the outcome statements `outcomes` and the day counts `dayCounts` (as
 * 20261129190000 made it, apart from them).
 */
export const callsAfterInsert = (
  outcomes: string,
  dayCounts = DAY_COUNTS,
) => `CREATE OR REPLACE FUNCTION calls_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO call_keys (agent_id, call_id) SELECT agent_id, call_id FROM new_rows;
      ${dayCounts}
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
      ${outcomes}
      RETURN NULL;
    END $$`;

/** One delta of a counter row of `c` at `bucket` (as apply_call_outcome_stat applies one per hour). */
const applyDelta = (c: Counters, bucket: string) => `
      IF p_calls > 0 THEN
        INSERT INTO ${c.table} AS s (agent_id, organization_id, name, value, ${c.column}, deleted, ${FIGURES})
        VALUES (p_agent, p_org, p_name, p_value, ${bucket}, p_deleted, p_calls, p_done, p_duration, p_done_duration)
        ON CONFLICT (${c.order}) DO UPDATE SET ${ADD_FIGURES};
      ELSE
        -- A vanished row belongs to an agent being deleted: nothing left to count.
        UPDATE ${c.table}
           SET calls = calls + p_calls, done_calls = done_calls + p_done, duration_total = duration_total + p_duration,
               done_duration_total = done_duration_total + p_done_duration
         WHERE agent_id = p_agent AND name = p_name AND value = p_value AND ${c.column} = ${bucket}
           AND deleted = p_deleted;
      END IF;`;

/** The outcome rows of the calls in `table` that count (their agents' counted fields), signed. */
const ROW = (sign: string, table: string) => `
  SELECT r.agent_id, r.organization_id, k.name, r.extracted_data -> k.name AS value,
         ${dayOf('r.created_at')} AS day, r.deleted_at IS NOT NULL AS deleted,
         ${sign}1 AS n, ${sign}(CASE WHEN r.done THEN 1 ELSE 0 END) AS done_n, ${sign}r.duration AS duration,
         ${sign}(CASE WHEN r.done THEN r.duration ELSE 0 END) AS done_duration
    FROM ${table} r
    JOIN (SELECT a.id AS agent_id, unnest(counted_outcome_names(a.analysis_fields)) AS name
            FROM agents a WHERE a.id IN (SELECT agent_id FROM ${table})) k ON k.agent_id = r.agent_id
   WHERE r.extracted_data \\? k.name`;

/** Update and delete of calls: the changed rows' deltas per day, in key order. */
const DAY_TRIGGERS = [
  ['delete', 'OLD TABLE AS old_rows', [ROW('-', 'old_rows')]],
  ['update', 'OLD TABLE AS old_rows NEW TABLE AS new_rows', [ROW('', 'new_rows'), ROW('-', 'old_rows')]],
] as const;

/** A field's counters in `c` rebuilt from the agent's calls (recount_call_outcomes). */
const rebuild = (c: Counters) => `
      DELETE FROM ${c.table} WHERE agent_id = NEW.id AND name = ANY(added || gone);
      INSERT INTO ${c.table} (agent_id, organization_id, name, value, ${c.column}, deleted, ${FIGURES})
      SELECT c.agent_id, c.organization_id, k.name, c.extracted_data -> k.name, ${c.bucket('c.created_at')},
             c.deleted_at IS NOT NULL, count(*), count(*) FILTER (WHERE c.done), sum(c.duration),
             coalesce(sum(c.duration) FILTER (WHERE c.done), 0)
        FROM calls c CROSS JOIN unnest(added) AS k(name)
       WHERE c.agent_id = NEW.id AND c.extracted_data \\? k.name
       GROUP BY 1, 2, 3, 4, 5, 6;`;

const recountCallOutcomes = (body: string) => `
    CREATE OR REPLACE FUNCTION recount_call_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      before_names text[] := counted_outcome_names(OLD.analysis_fields);
      after_names text[] := counted_outcome_names(NEW.analysis_fields);
      added text[] := ARRAY(SELECT unnest(after_names) EXCEPT SELECT unnest(before_names));
      gone text[] := ARRAY(SELECT unnest(before_names) EXCEPT SELECT unnest(after_names));
    BEGIN
      IF cardinality(added) = 0 AND cardinality(gone) = 0 THEN RETURN NULL; END IF;
      -- Every statement on this agent's calls that read the old definition has ended; later ones wait.
      PERFORM pg_advisory_xact_lock(hashtextextended('call_outcomes:' || lower(NEW.id::text), 0));${body}
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE call_outcome_day_stats (
      agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      organization_id uuid NOT NULL,
      name text NOT NULL,
      value jsonb NOT NULL,
      day date NOT NULL,
      deleted boolean NOT NULL,
      calls bigint NOT NULL,
      done_calls bigint NOT NULL,
      duration_total double precision NOT NULL,
      done_duration_total double precision NOT NULL,
      -- Live or trashed days of one value in order: a list total and a year of one value.
      PRIMARY KEY (agent_id, name, value, deleted, day)
    )`);
  await knex.raw(`
    CREATE INDEX call_outcome_hour_stats_by_hour_of_day ON call_outcome_hour_stats (agent_id, name, (${HOUR_OF_DAY}), hour)
      INCLUDE (value, deleted, organization_id, calls, done_calls, duration_total, done_duration_total);
    DROP INDEX call_outcome_hour_stats_totals`);
  await knex.raw(`
    CREATE FUNCTION apply_call_outcome_day_stat(p_agent uuid, p_org uuid, p_name text, p_value jsonb, p_day date,
                                                p_deleted boolean, p_calls bigint, p_done bigint,
                                                p_duration double precision, p_done_duration double precision)
      RETURNS void LANGUAGE plpgsql AS $$
    BEGIN${applyDelta(DAYS, 'p_day')}
    END $$`);
  for (const [op, transition, rows] of DAY_TRIGGERS)
    await knex.raw(`
      CREATE FUNCTION count_call_outcome_days_${op}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE d record;
      BEGIN
        -- calls_outcomes_${op} fired first and holds the agents' shared locks: the definition is as it read it.
        FOR d IN SELECT agent_id, organization_id, name, value, day, deleted, sum(n) AS n, sum(done_n) AS done_n,
                        sum(duration) AS duration, sum(done_duration) AS done_duration
                   FROM (${rows.join(' UNION ALL ')}) x
                  GROUP BY 1, 2, 3, 4, 5, 6
                 HAVING sum(n) <> 0 OR sum(done_n) <> 0 OR sum(duration) <> 0 OR sum(done_duration) <> 0
                  ORDER BY 1, 3, 4, 6, 5
        LOOP
          PERFORM apply_call_outcome_day_stat(d.agent_id, d.organization_id, d.name, d.value, d.day, d.deleted, d.n,
                                              d.done_n, d.duration, d.done_duration);
        END LOOP;
        RETURN NULL;
      END $$;
      CREATE TRIGGER calls_outcomes_${op}_days AFTER ${op.toUpperCase()} ON calls REFERENCING ${transition}
        FOR EACH STATEMENT EXECUTE FUNCTION count_call_outcome_days_${op}()`);
  await knex.raw(recountCallOutcomes(rebuild(HOURS) + rebuild(DAYS)));
  await knex.raw(callsAfterInsert(addNewRows(HOURS) + addNewRows(DAYS)));
  // Existing counters summed per day while no statement can change them: SHARE on calls and agents
  // waits for their writers to finish and keeps new ones out until the commit.
  await knex.raw(`LOCK TABLE agents, calls IN SHARE MODE`);
  await knex.raw(`
    INSERT INTO call_outcome_day_stats (agent_id, organization_id, name, value, day, deleted, ${FIGURES})
    SELECT agent_id, organization_id, name, value, (hour AT TIME ZONE 'UTC')::date, deleted, sum(calls),
           sum(done_calls), sum(duration_total), sum(done_duration_total)
      FROM call_outcome_hour_stats
     GROUP BY 1, 2, 3, 4, 5, 6`);
  await knex.raw(`ANALYZE call_outcome_day_stats`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(callsAfterInsert(addNewRows(HOURS)));
  await knex.raw(recountCallOutcomes(rebuild(HOURS)));
  for (const [op] of DAY_TRIGGERS)
    await knex.raw(`DROP TRIGGER calls_outcomes_${op}_days ON calls; DROP FUNCTION count_call_outcome_days_${op}()`);
  await knex.raw(`DROP FUNCTION apply_call_outcome_day_stat(uuid, uuid, text, jsonb, date, boolean, bigint, bigint,
                                                            double precision, double precision)`);
  await knex.raw(`DROP TABLE call_outcome_day_stats`);
  await knex.raw(`
    CREATE INDEX call_outcome_hour_stats_totals ON call_outcome_hour_stats (agent_id, name, value, deleted, hour)
      INCLUDE (organization_id, calls, done_calls);
    DROP INDEX call_outcome_hour_stats_by_hour_of_day`);
}
