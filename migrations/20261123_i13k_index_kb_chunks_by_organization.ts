import type { Knex } from 'knex';

/**
 * Knowledge-base search scans the full-text index once per question word and stops reading at a
 * share of candidates; every search is within one organization. A GIN index over the organization
 * and the tsvector (btree_gin, which ships with PostgreSQL and the embedded binaries) returns only
 * that organization's matches, so other tenants' chunks with the same words cost nothing. It
 * replaces the tsvector-only index. Where btree_gin cannot be installed the migration still
 * succeeds, the tsvector index stays, and search filters the organization after the index.
 *
 * Without `fastupdate`: new chunks go into the index at once instead of a pending list that every
 * index scan (several per search) reads through; inserting a document's chunks costs a few ms more.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DO $$
    BEGIN
      CREATE EXTENSION IF NOT EXISTS btree_gin;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'btree_gin is not available (%); knowledge-base search keeps the tsvector index', SQLERRM;
    END $$;
  `);
  await knex.raw(`
    DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX kb_chunks_organization_tsv ON kb_chunks USING gin (organization_id, tsv) WITH (fastupdate = off);
        DROP INDEX kb_chunks_tsv;
      ELSE
        ALTER INDEX kb_chunks_tsv SET (fastupdate = off);
      END IF;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The extension stays: other objects may use it.
  await knex.raw(
    `CREATE INDEX IF NOT EXISTS kb_chunks_tsv ON kb_chunks USING GIN (tsv);
     ALTER INDEX kb_chunks_tsv RESET (fastupdate);
     DROP INDEX IF EXISTS kb_chunks_organization_tsv;`,
  );
}
