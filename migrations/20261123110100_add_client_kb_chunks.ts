import type { Knex } from 'knex';

/**
 * Chunks a client brings itself (TalkPilot's external-chunk flow): the document remembers that its
 * chunks come from the client, so the processing pipeline leaves them alone; chunks gain the
 * fields TalkPilot clients send (token count, metadata, a write-only embedding).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('kb_documents', (t) => {
    t.text('chunk_source').notNullable().defaultTo('pipeline');
  });
  await knex.raw(`ALTER TABLE kb_documents
    ADD CONSTRAINT kb_documents_chunk_source CHECK (chunk_source IN ('pipeline', 'client'))`);
  await knex.schema.alterTable('kb_chunks', (t) => {
    t.integer('token_count').nullable();
    t.jsonb('metadata').nullable();
    t.specificType('embedding', 'real[]').nullable();
  });
  await knex.raw(`ALTER TABLE kb_chunks
    ADD CONSTRAINT kb_chunks_token_count CHECK (token_count >= 0),
    ADD CONSTRAINT kb_chunks_embedding_dimensions CHECK (cardinality(embedding) = 1536)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('kb_chunks', (t) => {
    t.dropColumn('embedding');
    t.dropColumn('metadata');
    t.dropColumn('token_count');
  });
  await knex.schema.alterTable('kb_documents', (t) => {
    t.dropColumn('chunk_source');
  });
}
