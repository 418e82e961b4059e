import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';

export type OwnDocumentRow = {
  id: string;
  title: string;
  content: string | null;
  language: string | null;
  chunk_source: 'pipeline' | 'client';
};

export type ChunkRow = {
  document_id: string;
  position: number;
  content: string;
  token_count: number | null;
  metadata: Record<string, unknown> | null;
};

/**
 * The reads a bundle needs that the other modules' repositories answer only page by page or not at
 * all: every employee, the agent's documents with their client chunks, the granted organization
 * documents, and agents and documents of an organization by name. Every query names the organization.
 */
export class BundleRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): BundleRepository {
    return new BundleRepository(trx);
  }

  /** The organization's agents, id and name (references by name resolve against them). */
  async agentNames(organizationId: string): Promise<{ id: string; name: string }[]> {
    return this.db('agents').where({ organization_id: organizationId }).orderBy(['name', 'id']).select('id', 'name');
  }

  /** The agent's own documents (not the organization's), in title order. */
  async ownDocuments(agent: { id: string; organization_id: string }): Promise<OwnDocumentRow[]> {
    return this.db('kb_documents')
      .where({ organization_id: agent.organization_id, agent_id: agent.id, scope: 'agent' })
      .orderBy(['title', 'content', 'id'])
      .select('id', 'title', 'content', 'language', 'chunk_source');
  }

  async chunksOf(organizationId: string, documentIds: string[]): Promise<ChunkRow[]> {
    if (documentIds.length === 0) return [];
    return this.db('kb_chunks')
      .where({ organization_id: organizationId })
      .whereIn('document_id', documentIds)
      .orderBy(['document_id', 'position', 'id'])
      .select('document_id', 'position', 'content', 'token_count', 'metadata');
  }

  /** The organization documents granted to the agent: id and title. */
  async grantedDocuments(agent: { id: string; organization_id: string }): Promise<{ id: string; title: string }[]> {
    return this.db('kb_document_grants as g')
      .join('kb_documents as d', 'd.id', 'g.document_id')
      .where({ 'g.agent_id': agent.id, 'g.organization_id': agent.organization_id, 'd.scope': 'organization' })
      .orderBy(['d.title', 'd.id'])
      .select('d.id', 'd.title');
  }

  /** The organization's documents, id and title. */
  async organizationDocuments(organizationId: string): Promise<{ id: string; title: string }[]> {
    return this.db('kb_documents')
      .where({ organization_id: organizationId, scope: 'organization' })
      .orderBy(['title', 'id'])
      .select('id', 'title');
  }

  async grant(organizationId: string, documentId: string, agentId: string, at: Date): Promise<void> {
    await this.db('kb_document_grants')
      .insert({ organization_id: organizationId, document_id: documentId, agent_id: agentId, created_at: at })
      .onConflict(['document_id', 'agent_id'])
      .ignore();
  }

  async revoke(organizationId: string, documentId: string, agentId: string): Promise<void> {
    await this.db('kb_document_grants')
      .where({ organization_id: organizationId, document_id: documentId, agent_id: agentId })
      .delete();
  }

  /** Every test case of the agent goes (a bundle's test cases replace them in its order). */
  async deleteTestCases(agent: { id: string; organization_id: string }): Promise<void> {
    await this.db('agent_test_cases').where({ organization_id: agent.organization_id, agent_id: agent.id }).delete();
  }
}
