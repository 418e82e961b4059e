import type { Knex } from 'knex';
import type { AgentRef, AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { paginationQuery, type Page } from '../../api/pagination.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import { parse, parseBody } from '../../api/validate.js';
import type { KnowledgeBaseJobs } from './kb.worker.js';
import type { AgentAccess } from '../agents/agent-access.js';
import type { KnowledgeBaseIndexRepository, SearchHit } from './kb-index.repository.js';
import {
  toDocument,
  type DocumentRow,
  type KnowledgeBaseChunk,
  type KnowledgeBaseDocument,
  type KnowledgeBaseRepository,
} from './knowledge-base.repository.js';
import {
  CreateChunksSchema,
  CreateDocumentSchema,
  ListDocumentsQuery,
  SearchSchema,
  UpdateDocumentSchema,
} from './knowledge-base.schemas.js';
import { searchTerms, textSearchConfig } from './text-search.js';

/** The text of a file or web source comes from its source: only its title can change. */
export function assertContentEditable(current: DocumentRow, content: string | undefined): void {
  if (content === undefined || (current.source_type !== 'file' && current.source_type !== 'url')) return;
  throw new ValidationError('Request body is invalid', [
    { field: 'content', message: `The text of a ${current.source_type} document comes from its source` },
  ]);
}

/** An agent's knowledge base: its own documents (writable) and the organization's granted to it (read-only). */
export class KnowledgeBaseService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly documents: KnowledgeBaseRepository,
    private readonly index: KnowledgeBaseIndexRepository,
    private readonly jobs: KnowledgeBaseJobs,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
  ) {}

  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<KnowledgeBaseDocument>> {
    const agent = await this.access.resolve(auth, agentId, 'kb:read');
    const { status, ...page } = parse(ListDocumentsQuery, query, 'Invalid query parameters');
    return this.documents.listVisible(agent, status, page);
  }

  /**
   * 201 with the new document in `pending`; its processing job commits with it. Empty content is
   * a placeholder: the document is `ready` with no chunks at once and waits for the client's chunks.
   */
  async create(auth: AuthContext, agentId: string, body: unknown): Promise<KnowledgeBaseDocument> {
    const agent = await this.access.resolve(auth, agentId, 'kb:write');
    const input = parseBody(CreateDocumentSchema, body);
    const now = this.clock.now();
    const placeholder = input.content === '';
    const row = await this.audited.transaction(async (trx) => {
      const created = await this.documents.with(trx).insert({
        organization_id: agent.organization_id,
        agent_id: agent.id,
        scope: 'agent',
        title: input.title,
        content: input.content,
        language: null,
        ...(placeholder ? { chunk_source: 'client' as const, status: 'ready' } : {}),
        created_at: now,
        updated_at: now,
      });
      if (!placeholder) await this.jobs.enqueue(created.id, trx);
      return created;
    });
    return toDocument(row);
  }

  async get(auth: AuthContext, agentId: string, documentId: string): Promise<KnowledgeBaseDocument> {
    const agent = await this.access.resolve(auth, agentId, 'kb:read');
    return toDocument(await this.visible(agent, documentId));
  }

  /**
   * Title and/or content; a changed content sends a pipeline document back to pending. A document
   * with client chunks keeps them (the content is stored only); emptied content makes a pipeline
   * document wait for client chunks. `If-Match` is checked against the locked row.
   */
  async update(
    auth: AuthContext,
    agentId: string,
    documentId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<KnowledgeBaseDocument> {
    const agent = await this.resolveWritable(auth, agentId, documentId);
    const input = parseBody(UpdateDocumentSchema, body);
    const row = await this.audited.transaction(async (trx) => {
      const current = await this.lockForWrite(trx, agent, documentId, conditions);
      assertContentEditable(current, input.content);
      const contentChanged = input.content !== undefined && input.content !== current.content;
      const titleChanged = input.title !== undefined && input.title !== current.title;
      if (!contentChanged && !titleChanged) return current;
      const pipeline = current.chunk_source === 'pipeline';
      const reprocess = contentChanged && pipeline && (input.content === '' ? 'await-client-chunks' : true);
      const updated = await this.documents.with(trx).update(current, input, reprocess, this.clock.now());
      if (reprocess === true) await this.jobs.enqueue(current.id, trx);
      return updated;
    });
    return toDocument(row);
  }

  async delete(auth: AuthContext, agentId: string, documentId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.resolveWritable(auth, agentId, documentId);
    await this.audited.transaction(async (trx) => {
      await this.lockForWrite(trx, agent, documentId, conditions);
      await this.documents.with(trx).delete(agent.organization_id, documentId);
    });
  }

  /** The agent's document locked for this write, after its `If-Match` (412) and the organization's rule (428). */
  private async lockForWrite(
    trx: Knex.Transaction,
    agent: AgentRef,
    documentId: string,
    conditions: WriteConditions,
  ): Promise<DocumentRow> {
    const current = await this.documents.with(trx).lock(agent.organization_id, documentId);
    if (!current || current.agent_id !== agent.id) throw new NotFoundError('Document');
    await assertWritePreconditions(trx, conditions, requiresIfMatch, {
      organizationId: agent.organization_id,
      current: toDocument(current),
    });
    return current;
  }

  async listChunks(auth: AuthContext, agentId: string, documentId: string, query: unknown) {
    const agent = await this.access.resolve(auth, agentId, 'kb:read');
    await this.visible(agent, documentId);
    const page = parse(paginationQuery, query, 'Invalid query parameters');
    return this.documents.listChunks(agent.organization_id, documentId, page);
  }

  /** `If-Match` takes the document's ETag: its chunks are part of it. */
  async deleteChunks(
    auth: AuthContext,
    agentId: string,
    documentId: string,
    conditions: WriteConditions,
  ): Promise<void> {
    const agent = await this.resolveWritable(auth, agentId, documentId);
    const now = this.clock.now();
    await this.audited.transaction(async (trx) => {
      // Lock order (src/db/locks.ts): the document row, then its chunks, as a document delete
      // (whose cascade reaches the chunks through the row) takes them. A document deleted since
      // the check above is gone with its chunks: 404.
      await this.lockForWrite(trx, agent, documentId, conditions);
      await this.documents.with(trx).deleteChunks(agent.organization_id, documentId, now);
    });
  }

  /**
   * Chunks the client brings (1 to 100 per request), with optional embeddings that are stored but
   * never returned. The document becomes a client-chunked one: `ready`, never re-chunked by the
   * pipeline, and searchable. A chunk_index the document already has is 409.
   */
  async createChunks(
    auth: AuthContext,
    agentId: string,
    documentId: string,
    body: unknown,
  ): Promise<{ data: KnowledgeBaseChunk[]; inserted_count: number }> {
    const agent = await this.resolveWritable(auth, agentId, documentId);
    const { chunks } = parseBody(CreateChunksSchema, body);
    const data = await this.audited.transaction(async (trx) => {
      const document = await this.documents.with(trx).lock(agent.organization_id, documentId);
      if (!document || document.agent_id !== agent.id) throw new NotFoundError('Document');
      const indexes = chunks.map((c) => c.chunk_index);
      const taken = new Set(await this.documents.with(trx).takenChunkIndexes(document.id, indexes));
      if (taken.size > 0) {
        throw new ConflictError(
          'The document already has chunks with these chunk_index values; delete its chunks first',
          indexes.flatMap((index, i) =>
            taken.has(index) ? [{ field: `chunks[${i}].chunk_index`, message: 'Already taken' }] : [],
          ),
        );
      }
      const tsConfig = textSearchConfig(document.language ?? (agent.language as string | null));
      return this.documents.with(trx).insertClientChunks(document, chunks, tsConfig, this.clock.now());
    });
    return { data, inserted_count: data.length };
  }

  /** The best-matching chunks of the ready documents the agent sees, best first. */
  async search(auth: AuthContext, agentId: string, body: unknown): Promise<{ data: SearchHit[] }> {
    const agent = await this.access.resolve(auth, agentId, 'kb:read');
    const { query, top_k } = parseBody(SearchSchema, body);
    return { data: await this.index.search(agent, searchTerms(query), top_k) };
  }

  private async visible(agent: AgentRef, documentId: string): Promise<DocumentRow> {
    const document = await this.documents.findVisible(agent, documentId);
    if (!document) throw new NotFoundError('Document');
    return document;
  }

  /**
   * The agent (after `kb:write` and its scope) once the document is one of its own: organization
   * documents are shared company knowledge, readable here, never writable.
   */
  private async resolveWritable(auth: AuthContext, agentId: string, documentId: string) {
    const agent = await this.access.resolve(auth, agentId, 'kb:write');
    const document = await this.visible(agent, documentId);
    if (document.scope === 'organization') {
      throw new ForbiddenError('Organization-scope documents are read-only for agents');
    }
    return agent;
  }
}
