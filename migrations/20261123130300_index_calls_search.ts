import type { Knex } from 'knex';

/**
 * `search` on calls: one text per call (name, number, request, summary, note and the transcript's
 * text) under a trigram index, which serves ILIKE '%...%' directly. pg_trgm ships with PostgreSQL
 * (and the embedded binaries); where it cannot be installed, the migration still succeeds and search
 * runs the same query without the index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION call_search_text(customer_name text, phone_number text, customer_request text,
                                     call_summary text, note text, transcript jsonb)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT concat_ws(' ', customer_name, phone_number, customer_request, call_summary, note,
                       (SELECT string_agg(e->>'text', ' ') FROM jsonb_array_elements(
                          CASE WHEN jsonb_typeof(transcript) = 'array' THEN transcript ELSE '[]'::jsonb END) e))
    $$;
  `);
  await knex.raw(`
    DO $$
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'pg_trgm is not available (%); calls search runs without an index', SQLERRM;
    END $$;
  `);
  await knex.raw(`
    DO $$
    DECLARE ops text;
    BEGIN
      SELECT format('%I.gin_trgm_ops', n.nspname) INTO ops
        FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm';
      IF ops IS NOT NULL THEN
        EXECUTE format('CREATE INDEX calls_search_trgm ON calls USING gin (call_search_text(customer_name, '
          'phone_number, customer_request, call_summary, note, transcript) %s)', ops);
      END IF;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The extension stays: other objects may use it.
  await knex.raw(
    `DROP INDEX IF EXISTS calls_search_trgm; DROP FUNCTION call_search_text(text, text, text, text, text, jsonb);`,
  );
}
