import { paginationShape } from '../../http/pagination.js';
import { z } from '../../openapi/zod.js';
import { LANGUAGES } from '../agents/agent.schemas.js';

export const KB_STATUSES = ['pending', 'processing', 'ready', 'error', 'failed'] as const;
export const KB_SOURCE_TYPES = ['manual', 'pdf', 'csv', 'txt', 'docx', 'website'] as const;
export const KB_SCOPES = ['agent', 'organization'] as const;

/** A length rule as a refinement: zod's own min/max also fire on a non-string, doubling the detail. */
const lengthBetween = (min: number, max: number) =>
  z
    .string()
    .refine((s) => s.length >= min && s.length <= max, `Must be ${min} to ${max} characters`)
    .openapi({ minLength: min, maxLength: max });

const title = lengthBetween(1, 500);
const content = lengthBetween(1, 100_000);

export const CreateDocumentSchema = z.object({ title, content }).openapi('CreateKnowledgeBaseDocument');

/** Only title and content are used; every other field (status, scope, ...) is ignored. */
export const UpdateDocumentSchema = z
  .object({ title: title.optional(), content: content.optional() })
  .openapi('UpdateKnowledgeBaseDocument');

export const ListDocumentsQuery = z.object({
  ...paginationShape,
  status: z.enum(KB_STATUSES, { message: `Must be one of ${KB_STATUSES.join(', ')}` }).optional(),
});

export const SearchSchema = z
  .object({
    query: lengthBetween(1, 1000).refine((q) => /[\p{L}\p{N}]/u.test(q), 'Must contain at least one word'),
    top_k: z.number().int().min(1).max(50).default(5),
  })
  .openapi('KnowledgeBaseSearch');

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
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('KnowledgeBaseDocument');

export const ChunkSchema = z
  .object({
    id: z.uuid(),
    document_id: z.uuid(),
    position: z.number().int().openapi({ description: 'Order of the chunk in its document, from 0' }),
    content: z.string(),
    created_at: z.iso.datetime(),
  })
  .openapi('KnowledgeBaseChunk');

export const SearchResultSchema = z
  .object({
    data: z.array(
      z.object({
        chunk_id: z.uuid(),
        document_id: z.uuid(),
        document_title: z.string(),
        scope: z.enum(KB_SCOPES),
        position: z.number().int(),
        content: z.string(),
        score: z.number().openapi({ description: 'Relevance between 0 and 1; higher is better' }),
      }),
    ),
  })
  .openapi('KnowledgeBaseSearchResult');

// Organization documents (token-only management endpoints).

const agentIds = z
  .array(z.uuid({ message: 'Must be a UUID' }))
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
