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
 * Lock: none that stops writes. The index is built month by month with CREATE INDEX CONCURRENTLY and
 * attached to the parent's index (made ON ONLY, invalid until every month has its own), so call
 * intake goes on meanwhile (10,000,000 calls: several minutes of building). Hence no transaction: a
 * run that stops half-way is completed by the next one (an invalid month's index is made again).
 */
export const config = { transaction: false };

const INDEX = 'calls_outcome_trgm';
const KEY = `call_outcome_text(extracted_data)`;
const WHERE = `WHERE extracted_data <> '{}'::jsonb`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION call_outcome_text(extracted_data jsonb)
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT string_agg(d.value #>> '{}', ' ')
        FROM jsonb_each(CASE WHEN jsonb_typeof(extracted_data) = 'object' THEN extracted_data ELSE '{}'::jsonb END) d
       WHERE jsonb_typeof(d.value) NOT IN ('boolean', 'null')
    $$;
  `);
  const { rows: trgm } = await knex.raw(
    `SELECT format('%I.gin_trgm_ops', n.nspname) AS ops
       FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm'`,
  );
  const ops = (trgm as { ops: string }[])[0]?.ops;
  if (ops !== undefined) {
    await knex.raw(`CREATE INDEX IF NOT EXISTS ${INDEX} ON ONLY calls USING gin (${KEY} ${ops}) ${WHERE}`);
    // Every month (and the default partition) with no index attached to the parent's yet; one of our
    // name there is left from a run that stopped and may be invalid: made again.
    const { rows } = await knex.raw(
      `SELECT p.relname AS month FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhrelid
        WHERE h.inhparent = 'calls'::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_inherits a JOIN pg_index x ON x.indexrelid = a.inhrelid
                           WHERE a.inhparent = ?::regclass AND x.indrelid = p.oid)
        ORDER BY p.relname`,
      [INDEX],
    );
    for (const { month } of rows as { month: string }[]) {
      const name = `${month}_outcome_trgm`;
      await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ??`, [name]);
      await knex.raw(`CREATE INDEX CONCURRENTLY ?? ON ?? USING gin (${KEY} ${ops}) ${WHERE}`, [name, month]);
      await knex.raw(`ALTER INDEX ${INDEX} ATTACH PARTITION ??`, [name]);
    }
  }
  await knex.raw(`
    CREATE STATISTICS IF NOT EXISTS events_call_body_stats
      ON ((payload->'call'->>'id')), ((payload->'call'->>'phone_number')) FROM events;
    ANALYZE events;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP STATISTICS IF EXISTS events_call_body_stats`);
  await knex.raw(`DROP INDEX IF EXISTS ${INDEX}; DROP FUNCTION IF EXISTS call_outcome_text(jsonb);`);
}
