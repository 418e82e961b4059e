import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, noContent, paginated, PaginationQuerySchema, tokenOnly } from '../../openapi/common.js';
import { agentOperations, operationGroup, resourceOperations } from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  ChunkSchema,
  CreateChunksSchema,
  CreatedChunksSchema,
  CreateDocumentSchema,
  CreateOrganizationDocumentSchema,
  DocumentSchema,
  GrantsSchema,
  KB_STATUSES,
  OrganizationDocumentSchema,
  SearchResultSchema,
  SearchSchema,
  UpdateDocumentSchema,
  UpdateOrganizationDocumentSchema,
} from './knowledge-base.schemas.js';

const ListQuery = PaginationQuerySchema.extend({
  status: z
    .enum([...KB_STATUSES, 'completed'])
    .optional()
    .openapi({ description: 'Only documents in this processing status; completed is another name for ready' }),
});

const base = '/v1/agents/{agentId}/knowledge-base';
const DocumentParams = z.object({ agentId: z.uuid(), documentId: z.uuid() });

export function registerKnowledgeBasePaths(registry: OpenAPIRegistry): void {
  const agentRoute = agentOperations(registry, 'Knowledge base');
  const documents = resourceOperations(agentRoute, {
    path: base,
    permission: 'kb',
    names: { operation: 'KnowledgeBaseDocument', noun: 'document' },
    schema: DocumentSchema,
  });
  documents.list({
    summary: "List the agent's documents and the organization documents granted to it (kb:read), newest first",
    query: ListQuery,
  });
  documents.create({
    summary: 'Create a manual document (kb:write); it starts pending and is processed in the background',
    body: CreateDocumentSchema,
  });
  agentRoute({
    method: 'post',
    path: `${base}/search`,
    operationId: 'searchKnowledgeBase',
    permission: 'kb:read',
    summary: 'Full-text search over the ready documents the agent sees (kb:read), best match first',
    description:
      'The words of the question are matched with OR and ranked with ts_rank. At most 1,000 candidate chunks are ' +
      'ranked: each word, and all words together, bring an equal share; a word in more chunks than its share ' +
      'contributes only that many of them, the first ones found rather than the most relevant. See the knowledge-base guide.',
    request: { params: z.object({ agentId: z.uuid() }), body: jsonBody(SearchSchema) },
    responses: { 200: json(SearchResultSchema, 'Ranked chunks') },
  });
  documents.get({ summary: 'Get one document (kb:read)' });
  documents.update({
    summary:
      'Change title and/or content (kb:write); a content change sends it back to pending; organization documents: 403',
    body: UpdateDocumentSchema,
  });
  documents.delete({ summary: 'Delete a document and its chunks (kb:write); organization documents: 403' });
  agentRoute({
    method: 'get',
    path: `${base}/{documentId}/chunks`,
    operationId: 'listKnowledgeBaseChunks',
    permission: 'kb:read',
    summary: 'List the chunks of a document in order (kb:read)',
    request: { params: DocumentParams, query: PaginationQuerySchema },
    responses: { 200: json(paginated(ChunkSchema), 'A page of chunks') },
  });
  agentRoute({
    method: 'post',
    path: `${base}/{documentId}/chunks`,
    operationId: 'createKnowledgeBaseChunks',
    permission: 'kb:write',
    summary:
      'Add chunks the client made itself, 1 to 100 per request, with optional embeddings (stored, never returned) (kb:write). The document becomes ready and the pipeline no longer re-chunks it; 409 for a chunk_index it already has',
    request: { params: DocumentParams, body: jsonBody(CreateChunksSchema) },
    responses: { 201: json(CreatedChunksSchema, 'The stored chunks') },
    errors: [409],
  });
  agentRoute({
    method: 'delete',
    path: `${base}/{documentId}/chunks`,
    operationId: 'deleteKnowledgeBaseChunks',
    permission: 'kb:write',
    summary: 'Remove all chunks of a document (kb:write); organization documents: 403',
    request: { params: DocumentParams },
    responses: { 204: noContent },
  });

  const orgRoute = operationGroup(registry, {
    tags: ['Knowledge base'],
    security: tokenOnly,
    agentScope: 'none',
    errors: [400, 401, 403, 404],
  });
  const orgPath = '/v1/organization/{orgId}/knowledge-base';
  const orgDocuments = resourceOperations(orgRoute, {
    path: orgPath,
    permission: 'kb',
    names: { operation: 'OrganizationKnowledgeBaseDocument', noun: 'document', plural: 'organization documents' },
    schema: OrganizationDocumentSchema,
  });
  orgDocuments.list({
    summary: 'List organization documents with their grants (dashboard token, kb:read)',
    query: ListQuery,
  });
  orgDocuments.create({
    summary: 'Create an organization document and grant it to agents (dashboard token, kb:write)',
    body: CreateOrganizationDocumentSchema,
  });
  orgDocuments.get({ summary: 'Get an organization document (dashboard token, kb:read)' });
  orgDocuments.update({
    summary: 'Change title, content or language (dashboard token, kb:write); content or language changes reprocess it',
    body: UpdateOrganizationDocumentSchema,
  });
  orgDocuments.delete({
    summary: 'Delete an organization document with its chunks and grants (dashboard token, kb:write)',
  });
  orgRoute({
    method: 'put',
    path: `${orgPath}/{documentId}/grants`,
    operationId: 'replaceKnowledgeBaseGrants',
    permission: 'kb:write',
    summary: 'Replace the agents the document is granted to (dashboard token, kb:write)',
    request: { params: z.object({ orgId: z.uuid(), documentId: z.uuid() }), body: jsonBody(GrantsSchema) },
    responses: { 200: json(z.object({ document_id: z.uuid(), agent_ids: z.array(z.uuid()) }), 'The grants') },
  });
}
