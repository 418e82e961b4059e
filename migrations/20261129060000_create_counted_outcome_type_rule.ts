import type { Knex } from 'knex';

/**
 * The rule "which analysis field types have outcome counters" in one place the database owns:
 * is_counted_outcome_type(type). counted_outcome_names, which every outcome trigger, the rebuild on
 * a change of analysis_fields and the list's total read, now asks it instead of naming the types
 * itself. The request path needs the same answer without a round trip, so isCountedType in
 * src/modules/calls/extracted-filters.ts mirrors it, and test/api/counted-outcome-rule.api.test.ts
 * fails when the two disagree on any analysis field type. A change of the rule is a new migration
 * that replaces this function (the counters of the fields it starts or stops counting need a
 * rebuild then) and the same change to isCountedType.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION is_counted_outcome_type(p_type text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(p_type IN ('enum', 'boolean'), false)
    $$;
    COMMENT ON FUNCTION is_counted_outcome_type(text) IS
      'Mirrored by isCountedType in src/modules/calls/extracted-filters.ts; test/api/counted-outcome-rule.api.test.ts checks they agree.';

    CREATE OR REPLACE FUNCTION counted_outcome_names(p_fields jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(array_agg(f->>'name' ORDER BY f->>'name'), '{}')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_fields) = 'array' THEN p_fields ELSE '[]' END) f
       WHERE is_counted_outcome_type(f->>'type')
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION counted_outcome_names(p_fields jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(array_agg(f->>'name' ORDER BY f->>'name'), '{}')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_fields) = 'array' THEN p_fields ELSE '[]' END) f
       WHERE f->>'type' IN ('enum', 'boolean')
    $$;
    DROP FUNCTION is_counted_outcome_type(text);
  `);
}
