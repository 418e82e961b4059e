import type { Knex } from 'knex';

/**
 * Knowledge-base search reads an organization's chunks in document and position order when a word
 * of the question is common (most chunks have it): this index gives it that order for one
 * organization and lets it stop after a few hundred chunks, where the GIN index would first collect
 * every chunk with the word. Deleting an organization also finds its chunks through it instead of
 * scanning the table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX IF NOT EXISTS kb_chunks_organization_document_position ON kb_chunks (organization_id, document_id, position)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS kb_chunks_organization_document_position');
}
