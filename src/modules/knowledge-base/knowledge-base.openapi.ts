import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { json, jsonBody, noContent, paginated, PaginationQuerySchema, tokenOnly } from '../../openapi/common.js';
import {
  agentOperations,
  operationGroup,
  pathParams,
  resourceOperations,
  type Operation,
} from '../../openapi/operations.js';
import { z } from '../../openapi/zod.js';
import {
  ChunkSchema,
  CreateChunksSchema,
  CreatedChunksSchema,
  CreateDocumentSchema,
  CreateOrganizationDocumentSchema,
  CreateWebSourceSchema,
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
const UploadSchema = z
  .object({
    file: z.string().openapi({
      type: 'string',
      format: 'binary',
      description: 'PDF, DOCX, HTML, Markdown or plain text; the type is detected from the content',
    }),
    title: z.string().min(1).max(500).optional().openapi({ description: "Defaults to the file's name" }),
  })
  .openapi('KnowledgeBaseUpload');
const multipartBody = { content: { 'multipart/form-data': { schema: UploadSchema } }, required: true };
const uploadDescription =
  'multipart/form-data with `file` and optional `title`, streamed: 413 as soon as the file passes KB_MAX_FILE_BYTES ' +
  '(default 20 MB), 415 UNSUPPORTED_MEDIA_TYPE when the content is not PDF, DOCX, HTML, Markdown or plain text ' +
  '(the message names what was found). The text is extracted in the background; the document ends ready, or ' +
  'failed with failure_reason encrypted, no_text, too_large_unpacked, too_many_pages or corrupt. The same file ' +
  '(same SHA-256) again returns the existing document with 200.';
const webSourceDescription =
  'The page (and with crawl.max_pages > 1 the same-origin pages it links to) is fetched in the background through ' +
  'the outgoing-request guard (no private or metadata addresses, on every redirect), robots.txt respected; each ' +
  'page becomes a section with its URL in the chunk metadata. refresh daily or weekly re-syncs with conditional ' +
  'requests; unchanged pages keep their chunks.';

/**
 * The operations that add a document from a source, the same for the agent's documents and the
 * organization's: upload a file, add a web source, sync a web source now. `operation` names them
 * (`upload${operation}File`, `create${operation}WebSource`, `sync${operation}WebSource`).
 */
function sourceOperations(
  register: (operation: Operation) => void,
  { path, operation, schema }: { path: string; operation: string; schema: z.ZodType },
  summaries: { upload: string; webSource: string; sync: string },
): void {
  const params = pathParams(path);
  register({
    method: 'post',
    path: `${path}/files`,
    operationId: `upload${operation}File`,
    permission: 'kb:write',
    summary: summaries.upload,
    description: uploadDescription,
    request: { params, body: multipartBody },
    responses: {
      200: json(schema, 'The same file was uploaded before: that document'),
      202: json(schema, 'The new document, pending extraction'),
    },
    errors: [413, 415],
  });
  register({
    method: 'post',
    path: `${path}/urls`,
    operationId: `create${operation}WebSource`,
    permission: 'kb:write',
    summary: summaries.webSource,
    description: webSourceDescription,
    request: { params, body: jsonBody(CreateWebSourceSchema) },
    responses: { 202: json(schema, 'The new web source, pending its first sync') },
  });
  register({
    method: 'post',
    path: `${path}/{documentId}/sync`,
    operationId: `sync${operation}WebSource`,
    permission: 'kb:write',
    summary: summaries.sync,
    request: { params: pathParams(`${path}/{documentId}`) },
    responses: { 202: json(schema, 'The document, sync_status pending or syncing') },
  });
}

export function registerKnowledgeBasePaths(registry: OpenAPIRegistry): void {
  const agentRoute = agentOperations(registry, 'Knowledge base');
  const documents = resourceOperations(agentRoute, {
    path: base,
    permission: 'kb',
    operation: 'KnowledgeBaseDocument',
    noun: 'document',
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
  sourceOperations(
    agentRoute,
    { path: base, operation: 'KnowledgeBase', schema: DocumentSchema },
    {
      upload: 'Upload a file as a document (kb:write): PDF, DOCX, HTML, Markdown or plain text',
      webSource: 'Add a web page (or a small same-origin crawl) as a document kept in sync (kb:write)',
      sync: 'Sync a web source now (kb:write); its chunks stay searchable until the sync replaces what changed',
    },
  );
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
    request: { params: pathParams(base), body: jsonBody(SearchSchema) },
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
    request: { query: PaginationQuerySchema },
    responses: { 200: json(paginated(ChunkSchema), 'A page of chunks') },
  });
  agentRoute({
    method: 'post',
    path: `${base}/{documentId}/chunks`,
    operationId: 'createKnowledgeBaseChunks',
    permission: 'kb:write',
    summary:
      'Add chunks the client made itself, 1 to 100 per request, with optional embeddings (stored, never returned) (kb:write). The document becomes ready and the pipeline no longer re-chunks it; 409 for a chunk_index it already has',
    request: { body: jsonBody(CreateChunksSchema) },
    responses: { 201: json(CreatedChunksSchema, 'The stored chunks') },
    errors: [409],
  });
  agentRoute({
    method: 'delete',
    path: `${base}/{documentId}/chunks`,
    operationId: 'deleteKnowledgeBaseChunks',
    permission: 'kb:write',
    summary: 'Remove all chunks of a document (kb:write); organization documents: 403',
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
    operation: 'OrganizationKnowledgeBaseDocument',
    noun: 'document',
    plural: 'organization documents',
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
  sourceOperations(
    orgRoute,
    { path: orgPath, operation: 'OrganizationKnowledgeBase', schema: OrganizationDocumentSchema },
    {
      upload: 'Upload a file as an organization document (dashboard token, kb:write)',
      webSource:
        'Add a web page (or a small crawl) as an organization document kept in sync (dashboard token, kb:write)',
      sync: 'Sync an organization web source now (dashboard token, kb:write)',
    },
  );
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
    request: { params: pathParams(`${orgPath}/{documentId}`), body: jsonBody(GrantsSchema) },
    responses: { 200: json(z.object({ document_id: z.uuid(), agent_ids: z.array(z.uuid()) }), 'The grants') },
  });
}
