import type { Knex } from 'knex';

/**
 * Knowledge base: documents (agent or organization scope), grants of organization documents to
 * agents, and the chunks the processing pipeline writes with a full-text index per chunk language.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('kb_documents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.uuid('agent_id').nullable().references('agents.id').onDelete('CASCADE');
    t.text('scope').notNullable();
    t.text('title').notNullable();
    t.text('content').nullable();
    t.text('source_type').notNullable().defaultTo('manual');
    t.text('source_url').nullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('chunk_count').notNullable().defaultTo(0);
    t.text('error_message').nullable();
    // Indexing language of organization documents; agent documents use their agent's language.
    t.text('language').nullable();
    // Bumped by every content change: the pipeline commits chunks only for the version it read.
    t.integer('content_version').notNullable().defaultTo(1);
    t.timestamp('processing_started_at', { useTz: true }).nullable();
    t.uuid('processing_job_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['agent_id', 'created_at', 'id']);
    t.index(['organization_id', 'scope', 'created_at', 'id']);
    t.index(['status', 'processing_started_at']);
  });
  await knex.raw(`ALTER TABLE kb_documents
    ADD CONSTRAINT kb_documents_scope CHECK ((scope = 'agent' AND agent_id IS NOT NULL) OR (scope = 'organization' AND agent_id IS NULL)),
    ADD CONSTRAINT kb_documents_title_length CHECK (char_length(title) BETWEEN 1 AND 500),
    ADD CONSTRAINT kb_documents_content_length CHECK (char_length(content) <= 100000),
    ADD CONSTRAINT kb_documents_source_type CHECK (source_type IN ('manual', 'pdf', 'csv', 'txt', 'docx', 'website')),
    ADD CONSTRAINT kb_documents_status CHECK (status IN ('pending', 'processing', 'ready', 'error', 'failed')),
    ADD CONSTRAINT kb_documents_language CHECK (language IN ('de', 'en', 'fr', 'es')),
    ADD CONSTRAINT kb_documents_chunk_count CHECK (chunk_count >= 0)`);

  await knex.schema.createTable('kb_document_grants', (t) => {
    t.uuid('document_id').notNullable().references('kb_documents.id').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['document_id', 'agent_id']);
    t.index(['agent_id']);
  });

  await knex.schema.createTable('kb_chunks', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('document_id').notNullable().references('kb_documents.id').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('content').notNullable();
    t.text('ts_config').notNullable();
    t.specificType('tsv', 'tsvector').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['document_id', 'position']);
  });
  await knex.raw(`ALTER TABLE kb_chunks
    ADD CONSTRAINT kb_chunks_ts_config CHECK (ts_config IN ('german', 'english', 'french', 'spanish', 'simple'))`);
  await knex.raw('CREATE INDEX kb_chunks_tsv ON kb_chunks USING GIN (tsv)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('kb_chunks');
  await knex.schema.dropTable('kb_document_grants');
  await knex.schema.dropTable('kb_documents');
}
