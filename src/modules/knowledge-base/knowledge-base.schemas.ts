import { paginationShape } from '../../api/pagination.js';
import { z } from '../../openapi/zod.js';
import { LANGUAGES } from '../agents/agent.schemas.js';
import { uuidField } from '../../api/validate.js';
import { text } from '../../validation/text.js';

export const KB_STATUSES = ['pending', 'processing', 'ready', 'error', 'failed'] as const;
export const KB_SOURCE_TYPES = ['manual', 'pdf', 'csv', 'txt', 'docx', 'website', 'file', 'url'] as const;
export const KB_FAILURE_REASONS = [
  'encrypted',
  'no_text',
  'too_large_unpacked',
  'too_many_pages',
  'corrupt',
  'unreachable',
] as const;
export const KB_REFRESH = ['never', 'daily', 'weekly'] as const;
export const KB_SYNC_STATUSES = ['pending', 'syncing', 'synced', 'partial', 'failed'] as const;
export const KB_FILE_MEDIA_TYPES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/html',
  'text/markdown',
  'text/plain',
] as const;
export const KB_SCOPES = ['agent', 'organization'] as const;

const title = text({ min: 1, max: 500 });
const content = text({ min: 1, max: 100_000 });
/** Empty content is a placeholder for a document whose chunks the client brings (POST .../chunks). */
const placeholderContent = text({ max: 100_000 }).openapi({
  description: 'Empty: the document waits for chunks from the client (POST .../chunks) and is not processed',
});

export const CreateDocumentSchema = z
  .object({ title, content: placeholderContent })
  .openapi('CreateKnowledgeBaseDocument');

/** Only title and content are used; every other field (status, scope, ...) is ignored. */
export const UpdateDocumentSchema = z
  .object({ title: title.optional(), content: placeholderContent.optional() })
  .openapi('UpdateKnowledgeBaseDocument');

/** Older clients filter by `completed`, the former name of `ready`. */
const statusFilter = z.preprocess(
  (v) => (v === 'completed' ? 'ready' : v),
  z.enum(KB_STATUSES, { message: `Must be one of ${KB_STATUSES.join(', ')} (or completed, meaning ready)` }),
);

export const ListDocumentsQuery = z.object({
  ...paginationShape,
  status: statusFilter.optional().openapi({ description: 'completed is accepted as another name for ready' }),
});

export const EMBEDDING_DIMENSIONS = 1536;
const MAX_METADATA_BYTES = 16_384;

const ChunkInputSchema = z.strictObject({
  content: text({ min: 1, max: 100_000 }),
  chunk_index: z.number().int('Must be an integer').min(0, 'Must be at least 0').max(1_000_000),
  token_count: z.number().int('Must be an integer').min(0, 'Must be at least 0').max(1_000_000).optional(),
  metadata: z
    .record(z.string(), z.unknown(), { message: 'Must be an object' })
    .refine(
      (m) => JSON.stringify(m).length <= MAX_METADATA_BYTES,
      `Must be at most ${MAX_METADATA_BYTES} bytes as JSON`,
    )
    .optional(),
  embedding: z
    .array(z.number().refine(Number.isFinite, 'Must be a finite number'))
    .length(EMBEDDING_DIMENSIONS, `Must have exactly ${EMBEDDING_DIMENSIONS} numbers (text-embedding-3-small)`)
    .optional()
    .openapi({ description: 'Stored, never returned', writeOnly: true }),
});

export const CreateChunksSchema = z
  .object({
    chunks: z
      .array(ChunkInputSchema)
      .min(1, 'Must have 1 to 100 chunks')
      .max(100, 'Must have 1 to 100 chunks')
      .superRefine((chunks, ctx) => {
        const seen = new Set<number>();
        chunks.forEach((c, i) => {
          if (typeof c?.chunk_index !== 'number') return;
          if (seen.has(c.chunk_index))
            ctx.addIssue({ code: 'custom', path: [i, 'chunk_index'], message: 'Repeats an earlier chunk_index' });
          seen.add(c.chunk_index);
        });
      }),
  })
  .openapi('CreateKnowledgeBaseChunks');
export type ChunkInput = z.output<typeof ChunkInputSchema>;

export const SearchSchema = z
  .object({
    query: text({ min: 1, max: 1000 }).refine((q) => /[\p{L}\p{N}]/u.test(q), 'Must contain at least one word'),
    top_k: z.number().int().min(1).max(50).default(5),
  })
  .openapi('KnowledgeBaseSearch');

export const FileSourceSchema = z
  .object({
    filename: z.string(),
    media_type: z.enum(KB_FILE_MEDIA_TYPES).openapi({ description: 'Detected from the content, not the name' }),
    bytes: z.number().int(),
    sha256: z.string(),
  })
  .openapi('KnowledgeBaseFileSource');

const includePath = z.string().min(1).max(500).regex(/^\//, 'Must start with /');

export const CrawlSchema = z
  .object({
    max_pages: z.number().int().min(1, 'Must be 1 to 200').max(200, 'Must be 1 to 200').default(1),
    same_origin: z.literal(true, { message: 'Only same-origin crawls are supported' }).default(true),
    include_paths: z
      .array(includePath)
      .max(50)
      .default([])
      .openapi({ description: 'Only pages whose path starts with one of these (the start page always)' }),
  })
  .openapi('KnowledgeBaseCrawl');

export const CreateWebSourceSchema = z
  .object({
    url: z.string().max(2000).openapi({ description: 'http(s) address of the start page' }),
    title: title.optional().openapi({ description: "Defaults to the page's title or the URL" }),
    crawl: CrawlSchema.optional(),
    refresh: z.enum(KB_REFRESH).default('never'),
  })
  .openapi('CreateKnowledgeBaseWebSource');

export const DocumentSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid().nullable().openapi({ description: 'null for organization documents' }),
    org_id: z.uuid(),
    scope: z.enum(KB_SCOPES),
    title: z.string(),
    content: z.string().nullable(),
    source_type: z.enum(KB_SOURCE_TYPES),
    source_url: z.string().nullable(),
    status: z.enum(KB_STATUSES),
    chunk_count: z.number().int(),
    error_message: z.string().nullable(),
    failure_reason: z.enum(KB_FAILURE_REASONS).nullable().openapi({
      description:
        'Why a file or web source failed: encrypted, no_text (e.g. a scanned PDF), too_large_unpacked, too_many_pages, corrupt, unreachable',
    }),
    source: FileSourceSchema.nullable().openapi({
      description: 'The uploaded file (source_type file); null otherwise',
    }),
    crawl: CrawlSchema.nullable().openapi({ description: 'Crawl options (source_type url); null otherwise' }),
    refresh: z.enum(KB_REFRESH).nullable().openapi({ description: 'Re-sync schedule (source_type url)' }),
    last_synced_at: z.iso.datetime().nullable(),
    sync_status: z.enum(KB_SYNC_STATUSES).nullable(),
    sync_errors: z
      .array(z.object({ url: z.string(), error: z.string() }))
      .nullable()
      .openapi({ description: 'Pages of the last sync that could not be fetched or read' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('KnowledgeBaseDocument');

export const ChunkSchema = z
  .object({
    id: z.uuid(),
    document_id: z.uuid(),
    agent_id: z.uuid().nullable().openapi({ description: "The document's agent; null for organization documents" }),
    chunk_index: z.number().int().openapi({ description: 'Order of the chunk in its document, from 0' }),
    position: z.number().int().openapi({ description: 'Same as chunk_index (kept for existing clients)' }),
    content: z.string(),
    token_count: z.number().int().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('KnowledgeBaseChunk');

export const CreatedChunksSchema = z
  .object({ data: z.array(ChunkSchema), inserted_count: z.number().int() })
  .openapi('CreatedKnowledgeBaseChunks');

export const SearchResultSchema = z
  .object({
    data: z.array(
      z.object({
        chunk_id: z.uuid(),
        document_id: z.uuid(),
        document_title: z.string(),
        scope: z.enum(KB_SCOPES),
        position: z.number().int(),
        chunk_index: z.number().int(),
        content: z.string(),
        score: z.number().openapi({ description: 'Relevance between 0 and 1; higher is better' }),
      }),
    ),
  })
  .openapi('KnowledgeBaseSearchResult');

// Organization documents (token-only management endpoints).

const agentIds = z
  .array(uuidField())
  .max(1000)
  .refine((ids) => new Set(ids).size === ids.length, 'Agent ids must not repeat');
const language = z.enum(LANGUAGES, { message: `Must be one of ${LANGUAGES.join(', ')} or null` }).nullable();

export const CreateOrganizationDocumentSchema = z
  .object({
    title,
    content,
    language: language.default(null).openapi({ description: 'Indexing language (stemming); null = no stemming' }),
    agent_ids: agentIds.default([]).openapi({ description: 'Agents of the organization the document is granted to' }),
  })
  .openapi('CreateOrganizationKnowledgeBaseDocument');

export const UpdateOrganizationDocumentSchema = z
  .object({ title: title.optional(), content: content.optional(), language: language.optional() })
  .openapi('UpdateOrganizationKnowledgeBaseDocument');

export const GrantsSchema = z.object({ agent_ids: agentIds }).openapi('KnowledgeBaseGrants');

export const OrganizationDocumentSchema = DocumentSchema.extend({
  language: z.enum(LANGUAGES).nullable(),
  agent_ids: z.array(z.uuid()).openapi({ description: 'Agents the document is granted to' }),
}).openapi('OrganizationKnowledgeBaseDocument');
