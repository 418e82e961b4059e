import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import type { ChunkInput } from './knowledge-base.schemas.js';
import type { TsConfig } from './text-search.js';
import { pick } from '../../db/pick.js';

type ChunkRow = {
  id: string;
  document_id: string;
  agent_id: string | null;
  position: number;
  content: string;
  token_count: number | null;
  metadata: Record<string, unknown> | null;
  created_at: Date;
};

/** A chunk as the API shows it: never the embedding. */
function toChunk(row: ChunkRow) {
  return {
    ...pick(row, ['id', 'document_id', 'agent_id']),
    chunk_index: row.position,
    ...pick(row, ['position', 'content', 'token_count', 'metadata', 'created_at']),
  };
}
export type KnowledgeBaseChunk = ReturnType<typeof toChunk>;

const CHUNK_COLUMNS = [
  'c.id',
  'c.document_id',
  'd.agent_id',
  'c.position',
  'c.content',
  'c.token_count',
  'c.metadata',
  'c.created_at',
];

export type DocumentRow = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  scope: 'agent' | 'organization';
  title: string;
  content: string | null;
  source_type: string;
  source_url: string | null;
  status: string;
  chunk_count: number;
  error_message: string | null;
  language: string | null;
  /** `client` once the client posted its own chunks: the pipeline no longer touches the document. */
  chunk_source: 'pipeline' | 'client';
  content_version: number;
  processing_started_at: Date | null;
  processing_job_id: string | null;
  /** Files: what was uploaded. */
  source: FileSource | null;
  source_sha256: string | null;
  failure_reason: string | null;
  /** Web sources: crawl options, schedule and the state of the last sync. */
  crawl: CrawlOptions | null;
  refresh: 'never' | 'daily' | 'weekly' | null;
  last_synced_at: Date | null;
  next_sync_at: Date | null;
  sync_status: string | null;
  sync_errors: { url: string; error: string }[] | null;
  created_at: Date;
  updated_at: Date;
};

export type FileSource = { filename: string; media_type: string; bytes: number; sha256: string };
export type CrawlOptions = { max_pages: number; same_origin: boolean; include_paths: string[] };

/** Every column of a DocumentRow; queries select these, never `*`. */
const DOCUMENT_COLUMNS = [
  'id',
  'organization_id',
  'agent_id',
  'scope',
  'title',
  'content',
  'source_type',
  'source_url',
  'status',
  'chunk_count',
  'error_message',
  'language',
  'chunk_source',
  'content_version',
  'processing_started_at',
  'processing_job_id',
  'source',
  'source_sha256',
  'failure_reason',
  'crawl',
  'refresh',
  'last_synced_at',
  'next_sync_at',
  'sync_status',
  'sync_errors',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof DocumentRow)[];
/** The same, on the `d` alias. */
const D_COLUMNS = DOCUMENT_COLUMNS.map((column) => `d.${column}`);

export type NewDocument = Pick<
  DocumentRow,
  'organization_id' | 'agent_id' | 'scope' | 'title' | 'content' | 'language'
> &
  Partial<
    Pick<
      DocumentRow,
      | 'chunk_source'
      | 'status'
      | 'source_type'
      | 'source_url'
      | 'source_sha256'
      | 'refresh'
      | 'sync_status'
      | 'next_sync_at'
    >
  > & {
    source?: string | null;
    crawl?: string | null;
    created_at: Date;
    updated_at: Date;
  };

export type DocumentChanges = Partial<Pick<DocumentRow, 'title' | 'content' | 'language'>>;

/** The KnowledgeBaseDocument as the API shows it; processing bookkeeping stays inside. */
export function toDocument(row: DocumentRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    org_id: row.organization_id,
    scope: row.scope,
    title: row.title,
    content: row.content,
    source_type: row.source_type,
    source_url: row.source_url,
    status: row.status,
    chunk_count: row.chunk_count,
    error_message: row.error_message,
    failure_reason: row.failure_reason,
    source: row.source,
    crawl: row.crawl,
    refresh: row.refresh,
    last_synced_at: row.last_synced_at,
    sync_status: row.sync_status,
    sync_errors: row.sync_errors,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type KnowledgeBaseDocument = ReturnType<typeof toDocument>;

const NEWEST_FIRST = [
  { column: 'd.created_at', order: 'desc' as const },
  { column: 'd.id', order: 'desc' as const },
];

/** Documents an agent sees: its own, and the organization documents granted to it. */
export function visibleTo(query: Knex.QueryBuilder, agent: AgentRef): Knex.QueryBuilder {
  return query
    .where('d.organization_id', agent.organization_id)
    .andWhere((own) =>
      own
        .where('d.agent_id', agent.id)
        .orWhereExists((grant) =>
          grant
            .select(1)
            .from('kb_document_grants as g')
            .whereRaw('g.document_id = d.id')
            .andWhere('g.agent_id', agent.id),
        ),
    );
}

export class KnowledgeBaseRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): KnowledgeBaseRepository {
    return new KnowledgeBaseRepository(trx);
  }

  async insert(document: NewDocument): Promise<DocumentRow> {
    const [row] = await this.db('kb_documents').insert(document).returning(DOCUMENT_COLUMNS);
    return row;
  }

  /** The file document with this content in the same place (agent or organization scope). */
  async findBySha256(organizationId: string, agentId: string | null, sha256: string): Promise<DocumentRow | undefined> {
    return this.db('kb_documents')
      .where({ organization_id: organizationId, scope: agentId ? 'agent' : 'organization', source_sha256: sha256 })
      .andWhereRaw("COALESCE(agent_id, '00000000-0000-0000-0000-000000000000'::uuid) = ?", [
        agentId ?? '00000000-0000-0000-0000-000000000000',
      ])
      .first(DOCUMENT_COLUMNS);
  }

  /**
   * A web source waits for a sync (`sync_status` pending). Its status and chunks stay as they are,
   * searchable, until the sync replaces what changed.
   */
  async markForSync(current: DocumentRow, now: Date): Promise<DocumentRow> {
    const [row] = await this.db('kb_documents')
      .where({ id: current.id, organization_id: current.organization_id })
      .update({ sync_status: 'pending', processing_started_at: null, processing_job_id: null, updated_at: now })
      .returning(DOCUMENT_COLUMNS);
    return row;
  }

  async listVisible(
    agent: AgentRef,
    status: string | undefined,
    page: PageParams,
  ): Promise<Page<KnowledgeBaseDocument>> {
    const query = visibleTo(this.db('kb_documents as d'), agent);
    if (status) query.andWhere('d.status', status);
    return paginate<DocumentRow, KnowledgeBaseDocument>(query.select(D_COLUMNS), page, NEWEST_FIRST, toDocument);
  }

  async findVisible(agent: AgentRef, documentId: string): Promise<DocumentRow | undefined> {
    return visibleTo(this.db('kb_documents as d'), agent).andWhere('d.id', documentId).first(D_COLUMNS);
  }

  /** Row lock for a change, scoped by organization. */
  async lock(organizationId: string, documentId: string): Promise<DocumentRow | undefined> {
    return this.db('kb_documents')
      .where({ id: documentId, organization_id: organizationId })
      .forUpdate()
      .first(DOCUMENT_COLUMNS);
  }

  /**
   * Applies title/content changes. A content change bumps the version, drops the old chunks and
   * sends the document back to pending; the caller enqueues the processing job in its transaction.
   */
  async update(
    current: DocumentRow,
    changes: DocumentChanges,
    reprocess: boolean | 'await-client-chunks',
    now: Date,
  ): Promise<DocumentRow> {
    const values: Record<string, unknown> = { ...changes, updated_at: now };
    if (reprocess === 'await-client-chunks') {
      // Emptied content: the document now waits for the client's chunks instead of the pipeline.
      Object.assign(values, {
        content_version: this.db.raw('content_version + 1'),
        chunk_source: 'client',
        status: 'ready',
        chunk_count: 0,
        error_message: null,
        processing_started_at: null,
        processing_job_id: null,
      });
      await this.db('kb_chunks').where({ document_id: current.id, organization_id: current.organization_id }).delete();
    } else if (reprocess) {
      Object.assign(values, {
        content_version: this.db.raw('content_version + 1'),
        status: 'pending',
        chunk_count: 0,
        error_message: null,
        processing_started_at: null,
        processing_job_id: null,
      });
      await this.db('kb_chunks').where({ document_id: current.id, organization_id: current.organization_id }).delete();
    }
    const [row] = await this.db('kb_documents')
      .where({ id: current.id, organization_id: current.organization_id })
      .update(values)
      .returning(DOCUMENT_COLUMNS);
    return row;
  }

  async delete(organizationId: string, documentId: string): Promise<void> {
    // Chunks and grants go with the document (ON DELETE CASCADE).
    await this.db('kb_documents').where({ id: documentId, organization_id: organizationId }).delete();
  }

  async listChunks(organizationId: string, documentId: string, page: PageParams): Promise<Page<KnowledgeBaseChunk>> {
    const query = this.db('kb_chunks as c')
      .join('kb_documents as d', 'd.id', 'c.document_id')
      .where({ 'c.document_id': documentId, 'c.organization_id': organizationId });
    return paginate<ChunkRow, KnowledgeBaseChunk>(
      query.select(CHUNK_COLUMNS),
      page,
      [
        { column: 'c.position', order: 'asc' },
        { column: 'c.id', order: 'asc' },
      ],
      toChunk,
    );
  }

  /** The chunk_index values among `indexes` the document already has. */
  async takenChunkIndexes(documentId: string, indexes: number[]): Promise<number[]> {
    const rows: { position: number }[] = await this.db('kb_chunks')
      .where({ document_id: documentId })
      .whereIn('position', indexes)
      .select('position');
    return rows.map((r) => r.position);
  }

  /**
   * Stores chunks the client brought, indexed for search like the pipeline's, and makes the
   * document a ready, client-chunked one (a running pipeline job then finds nothing to finish).
   */
  async insertClientChunks(
    document: DocumentRow,
    chunks: ChunkInput[],
    tsConfig: TsConfig,
    now: Date,
  ): Promise<KnowledgeBaseChunk[]> {
    const rows: ChunkRow[] = await this.db('kb_chunks')
      .insert(
        chunks.map((c) => ({
          document_id: document.id,
          organization_id: document.organization_id,
          position: c.chunk_index,
          content: c.content,
          token_count: c.token_count ?? null,
          metadata: c.metadata === undefined ? null : JSON.stringify(c.metadata),
          embedding: c.embedding ?? null,
          ts_config: tsConfig,
          tsv: this.db.raw('to_tsvector(?::regconfig, ?)', [tsConfig, c.content]),
          created_at: now,
        })),
      )
      .returning(['id', 'document_id', 'position', 'content', 'token_count', 'metadata', 'created_at']);
    const [{ count }] = await this.db('kb_chunks').where({ document_id: document.id }).count({ count: '*' });
    await this.db('kb_documents')
      .where({ id: document.id, organization_id: document.organization_id })
      .update({
        chunk_source: 'client',
        status: 'ready',
        chunk_count: Number(count),
        error_message: null,
        content_version: this.db.raw('content_version + 1'),
        processing_started_at: null,
        processing_job_id: null,
        updated_at: now,
      });
    return rows
      .map((row) => toChunk({ ...row, agent_id: document.agent_id }))
      .sort((a, b) => a.chunk_index - b.chunk_index);
  }

  /** Two writes: call it on `with(trx)`. */
  async deleteChunks(organizationId: string, documentId: string, now: Date): Promise<void> {
    await this.db('kb_chunks').where({ document_id: documentId, organization_id: organizationId }).delete();
    await this.db('kb_documents')
      .where({ id: documentId, organization_id: organizationId })
      .update({ chunk_count: 0, updated_at: now });
  }

  // Organization documents and their grants.

  async listOrganization(
    organizationId: string,
    status: string | undefined,
    page: PageParams,
  ): Promise<Page<DocumentRow>> {
    const query = this.db('kb_documents as d').where({
      'd.organization_id': organizationId,
      'd.scope': 'organization',
    });
    if (status) query.andWhere('d.status', status);
    return paginate<DocumentRow>(query.select(D_COLUMNS), page, NEWEST_FIRST);
  }

  async findOrganization(organizationId: string, documentId: string): Promise<DocumentRow | undefined> {
    return this.db('kb_documents')
      .where({ id: documentId, organization_id: organizationId, scope: 'organization' })
      .first(DOCUMENT_COLUMNS);
  }

  async grantsOf(organizationId: string, documentIds: string[]): Promise<Map<string, string[]>> {
    const grants = new Map<string, string[]>(documentIds.map((id) => [id, []]));
    if (documentIds.length === 0) return grants;
    const rows: { document_id: string; agent_id: string }[] = await this.db('kb_document_grants')
      .where({ organization_id: organizationId })
      .whereIn('document_id', documentIds)
      .orderBy(['created_at', 'agent_id'])
      .select('document_id', 'agent_id');
    for (const row of rows) grants.get(row.document_id)?.push(row.agent_id);
    return grants;
  }

  async replaceGrants(organizationId: string, documentId: string, agentIds: string[], now: Date): Promise<void> {
    await this.db('kb_document_grants').where({ document_id: documentId, organization_id: organizationId }).delete();
    if (agentIds.length === 0) return;
    await this.db('kb_document_grants').insert(
      agentIds.map((agentId) => ({
        document_id: documentId,
        agent_id: agentId,
        organization_id: organizationId,
        created_at: now,
      })),
    );
  }

  async existingAgentIds(organizationId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows: { id: string }[] = await this.db('agents')
      .where({ organization_id: organizationId })
      .whereIn('id', ids)
      .select('id');
    return new Set(rows.map((r) => r.id));
  }
}
