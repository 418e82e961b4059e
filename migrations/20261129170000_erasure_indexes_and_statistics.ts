import type { Knex } from 'knex';

/**
 * An erasure looks for the person's address or full name in every outcome it removes (string,
 * number, date and undeclared ones). Without an index that reads the outcomes of every call of the
 * organization: with outcomes on every call, a sequential scan of all partitions and a plan that
 * expected half the calls to match (minutes for 1,000 calls among millions; `npm run bench -- calls`).
 * `call_outcome_text` is the outcomes' text (every value but booleans and nulls, which cannot hold an
 * address or a name) under a trigram index, as `call_search_text` is for the other fields; the
 * erasure still decides on the few candidates with its exact rule (enum values it keeps do not count).
 * Partial: calls without outcomes are not in it. Without pg_trgm the function still exists and the
 * erasure reads the outcomes as before.
 *
 * The stored call.completed bodies are found through expression indexes on the body's call id and
 * number. A partitioned table has no statistics for an index's expression, so the planner took each
 * call id to match thousands of bodies and chose a scan of every body of the organization (seconds
 * for 1,000 bodies among a million); extended statistics on the two expressions give it real counts
 * (ANALYZE fills them, as autovacuum does).
 *
 * Lock: CREATE INDEX on the partitioned table holds a SHARE lock on `calls` (writes wait, reads go on)
 * while it builds every month's index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION call_outcome_text(extracted_data jsonb)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT string_agg(d.value #>> '{}', ' ')
        FROM jsonb_each(CASE WHEN jsonb_typeof(extracted_data) = 'object' THEN extracted_data ELSE '{}'::jsonb END) d
       WHERE jsonb_typeof(d.value) NOT IN ('boolean', 'null')
    $$;
  `);
  await knex.raw(`
    DO $$
    DECLARE ops text;
    BEGIN
      SELECT format('%I.gin_trgm_ops', n.nspname) INTO ops
        FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm';
      IF ops IS NOT NULL THEN
        EXECUTE format('CREATE INDEX calls_outcome_trgm ON calls USING gin (call_outcome_text(extracted_data) %s) '
          'WHERE extracted_data <> ''{}''::jsonb', ops);
      END IF;
    END $$;
  `);
  await knex.raw(`
    CREATE STATISTICS IF NOT EXISTS events_call_body_stats
      ON ((payload->'call'->>'id')), ((payload->'call'->>'phone_number')) FROM events;
    ANALYZE events;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP STATISTICS IF EXISTS events_call_body_stats`);
  await knex.raw(`DROP INDEX IF EXISTS calls_outcome_trgm; DROP FUNCTION call_outcome_text(jsonb);`);
}
