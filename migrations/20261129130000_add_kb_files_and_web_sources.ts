import type { Knex } from 'knex';

/**
 * Knowledge from files and web pages. Documents gain the `file` and `url` source types, the file's
 * description (`source`), a failure reason people understand, and for web sources the crawl
 * options, refresh schedule and sync state. Uploaded bytes wait for extraction in a table of their
 * own (`kb_file_parts`, 1 MB per row) and are deleted when extraction ends; each fetched page of
 * a web source is a row of `kb_pages` with its validators (ETag, Last-Modified) and content hash.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE kb_documents
    DROP CONSTRAINT kb_documents_source_type,
    ADD CONSTRAINT kb_documents_source_type CHECK (source_type IN ('manual', 'pdf', 'csv', 'txt', 'docx', 'website', 'file', 'url'))`);
  await knex.schema.alterTable('kb_documents', (t) => {
    t.jsonb('source').nullable();
    t.text('source_sha256').nullable();
    t.text('failure_reason').nullable();
    t.jsonb('crawl').nullable();
    t.text('refresh').nullable();
    t.timestamp('last_synced_at', { useTz: true }).nullable();
    t.timestamp('next_sync_at', { useTz: true }).nullable();
    t.text('sync_status').nullable();
    t.jsonb('sync_errors').nullable();
  });
  await knex.raw(`ALTER TABLE kb_documents
    ADD CONSTRAINT kb_documents_failure_reason CHECK (failure_reason IN ('encrypted', 'no_text', 'too_large_unpacked', 'too_many_pages', 'corrupt', 'unreachable')),
    ADD CONSTRAINT kb_documents_refresh CHECK (refresh IN ('never', 'daily', 'weekly')),
    ADD CONSTRAINT kb_documents_sync_status CHECK (sync_status IN ('pending', 'syncing', 'synced', 'partial', 'failed'))`);
  // The same file twice in the same place is one document.
  await knex.raw(`CREATE UNIQUE INDEX kb_documents_file_sha256 ON kb_documents
    (organization_id, scope, (COALESCE(agent_id, '00000000-0000-0000-0000-000000000000'::uuid)), source_sha256)
    WHERE source_sha256 IS NOT NULL`);
  await knex.raw(`CREATE INDEX kb_documents_next_sync ON kb_documents (next_sync_at) WHERE next_sync_at IS NOT NULL`);

  await knex.schema.createTable('kb_file_parts', (t) => {
    t.uuid('document_id').notNullable().references('kb_documents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.integer('part').notNullable();
    t.binary('data').notNullable();
    t.primary(['document_id', 'part']);
  });

  await knex.schema.createTable('kb_pages', (t) => {
    t.uuid('document_id').notNullable().references('kb_documents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('title').nullable();
    t.text('etag').nullable();
    t.text('last_modified').nullable();
    t.text('content_hash').nullable();
    // Links found on the page last time: a page that answers 304 still leads the crawl on.
    t.jsonb('links').nullable();
    t.text('error').nullable();
    t.timestamp('fetched_at', { useTz: true }).notNullable();
    t.primary(['document_id', 'url']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('kb_pages');
  await knex.schema.dropTable('kb_file_parts');
  await knex.raw('DROP INDEX kb_documents_next_sync');
  await knex.raw('DROP INDEX kb_documents_file_sha256');
  await knex.raw(`ALTER TABLE kb_documents
    DROP CONSTRAINT kb_documents_failure_reason,
    DROP CONSTRAINT kb_documents_refresh,
    DROP CONSTRAINT kb_documents_sync_status`);
  await knex.schema.alterTable('kb_documents', (t) => {
    t.dropColumns(
      'source',
      'source_sha256',
      'failure_reason',
      'crawl',
      'refresh',
      'last_synced_at',
      'next_sync_at',
      'sync_status',
      'sync_errors',
    );
  });
  await knex.raw(`DELETE FROM kb_documents WHERE source_type IN ('file', 'url')`);
  await knex.raw(`ALTER TABLE kb_documents
    DROP CONSTRAINT kb_documents_source_type,
    ADD CONSTRAINT kb_documents_source_type CHECK (source_type IN ('manual', 'pdf', 'csv', 'txt', 'docx', 'website'))`);
}
