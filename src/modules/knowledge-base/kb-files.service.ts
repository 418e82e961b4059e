import { createReadStream } from 'node:fs';
import type { Knex } from 'knex';
import { assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { NotFoundError, UnsupportedMediaTypeError, ValidationError } from '../../errors/index.js';
import { parseBody } from '../../api/validate.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { detectMediaType } from './file-detect.js';
import type { KnowledgeBaseJobs } from './kb.worker.js';
import {
  toDocument,
  type DocumentRow,
  type KnowledgeBaseRepository,
  type NewDocument,
} from './knowledge-base.repository.js';
import { CreateWebSourceSchema } from './knowledge-base.schemas.js';

/** An upload as the router received it: spooled to a temporary file, counted and hashed. */
export type ReceivedFile = {
  path: string;
  filename: string;
  declared_type: string;
  bytes: number;
  sha256: string;
  title: string | undefined;
  cleanup: () => Promise<void>;
};

/** Bytes per row of kb_file_parts: an upload is stored without being held in memory whole. */
const PART_BYTES = 1024 * 1024;

type Place = { organizationId: string; agentId: string | null };
export type Stored<T> = { created: boolean; document: T };

/**
 * Documents whose text comes from elsewhere: uploaded files (PDF, DOCX, HTML, Markdown, text) and
 * web sources (pages fetched through the outgoing-request guard). Both are processed by the
 * knowledge-base pipeline (kb.worker.ts).
 */
export class KnowledgeBaseSourcesService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly documents: KnowledgeBaseRepository,
    private readonly jobs: KnowledgeBaseJobs,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    private readonly options: { allowPrivateTargets: boolean },
  ) {}

  /** Permission and agent scope first; only then is the body read (`receive`). */
  async uploadForAgent(
    auth: AuthContext,
    agentId: string,
    receive: () => Promise<ReceivedFile>,
  ): Promise<Stored<ReturnType<typeof toDocument>>> {
    const stored = await this.store(await this.agentPlace(auth, agentId), await receive());
    return { created: stored.created, document: toDocument(stored.document) };
  }

  async uploadForOrganization(
    auth: AuthContext,
    orgId: string,
    receive: () => Promise<ReceivedFile>,
  ): Promise<Stored<DocumentRow>> {
    return this.store(this.organizationPlace(auth, orgId), await receive());
  }

  async createWebSourceForAgent(auth: AuthContext, agentId: string, body: unknown) {
    return toDocument(await this.createWebSource(await this.agentPlace(auth, agentId), body));
  }

  async createWebSourceForOrganization(auth: AuthContext, orgId: string, body: unknown): Promise<DocumentRow> {
    return this.createWebSource(this.organizationPlace(auth, orgId), body);
  }

  async syncForAgent(auth: AuthContext, agentId: string, documentId: string) {
    return toDocument(await this.sync(await this.agentPlace(auth, agentId), documentId));
  }

  async syncForOrganization(auth: AuthContext, orgId: string, documentId: string): Promise<DocumentRow> {
    return this.sync(this.organizationPlace(auth, orgId), documentId);
  }

  /** An agent's documents, once the caller may write them (kb:write, agent scope). */
  private async agentPlace(auth: AuthContext, agentId: string): Promise<Place> {
    const agent = await this.access.resolve(auth, agentId, 'kb:write');
    return { organizationId: agent.organization_id, agentId: agent.id };
  }

  /** The organization's own documents, once the caller may write them (kb:write). */
  private organizationPlace(auth: AuthContext, orgId: string): Place {
    this.authorize(auth, orgId, 'kb:write');
    return { organizationId: orgId, agentId: null };
  }

  private async store(place: Place, file: ReceivedFile): Promise<Stored<DocumentRow>> {
    try {
      if (file.bytes === 0)
        throw new ValidationError('Request body is invalid', [{ field: 'file', message: 'The file is empty' }]);
      const detected = await detectMediaType(file.path);
      if (!detected.supported)
        throw new UnsupportedMediaTypeError(
          `The file is ${detected.found}; supported are PDF, DOCX, HTML, Markdown and plain text`,
        );
      const existing = await this.findFile(place, file.sha256);
      if (existing) return { created: false, document: existing };
      const now = this.clock.now();
      const document: NewDocument = {
        organization_id: place.organizationId,
        agent_id: place.agentId,
        scope: place.agentId ? 'agent' : 'organization',
        title: (file.title ?? file.filename).slice(0, 500) || 'Upload',
        content: null,
        language: null,
        source_type: 'file',
        source: JSON.stringify({
          filename: file.filename.slice(0, 500),
          media_type: detected.media_type,
          bytes: file.bytes,
          sha256: file.sha256,
        }),
        source_sha256: file.sha256,
        created_at: now,
        updated_at: now,
      };
      try {
        const created = await this.audited.transaction(async (trx) => {
          const row = await this.documents.with(trx).insert(document);
          await this.storeParts(trx, row, file.path);
          await this.jobs.enqueue(row.id, trx);
          return row;
        });
        return { created: true, document: created };
      } catch (error) {
        // The same file uploaded at the same time: the other upload's document.
        if (!isUniqueViolation(error, 'kb_documents_file_sha256')) throw error;
        const winner = await this.findFile(place, file.sha256);
        if (!winner) throw error;
        return { created: false, document: winner };
      }
    } finally {
      await file.cleanup();
    }
  }

  private async storeParts(trx: Knex.Transaction, row: DocumentRow, path: string): Promise<void> {
    let part = 0;
    for await (const data of createReadStream(path, { highWaterMark: PART_BYTES })) {
      await trx('kb_file_parts').insert({
        document_id: row.id,
        organization_id: row.organization_id,
        part: part++,
        data,
      });
    }
  }

  private findFile(place: Place, sha256: string): Promise<DocumentRow | undefined> {
    return this.documents.findBySha256(place.organizationId, place.agentId, sha256);
  }

  private async createWebSource(place: Place, body: unknown): Promise<DocumentRow> {
    const input = parseBody(CreateWebSourceSchema, body);
    const problem = outgoingUrlProblem(input.url, { allowPrivate: this.options.allowPrivateTargets });
    if (problem) throw new ValidationError('Request body is invalid', [{ field: 'url', message: problem }]);
    const now = this.clock.now();
    return this.audited.transaction(async (trx) => {
      const row = await this.documents.with(trx).insert({
        organization_id: place.organizationId,
        agent_id: place.agentId,
        scope: place.agentId ? 'agent' : 'organization',
        title: input.title ?? input.url.slice(0, 500),
        content: null,
        language: null,
        source_type: 'url',
        source_url: input.url,
        crawl: JSON.stringify(input.crawl ?? { max_pages: 1, same_origin: true, include_paths: [] }),
        refresh: input.refresh,
        sync_status: 'pending',
        created_at: now,
        updated_at: now,
      });
      await this.jobs.enqueue(row.id, trx);
      return row;
    });
  }

  /** Sends a web source back to pending: the pipeline syncs it now. Already waiting or syncing: unchanged. */
  private async sync(place: Place, documentId: string): Promise<DocumentRow> {
    return this.audited.transaction(async (trx) => {
      const current = await this.documents.with(trx).lock(place.organizationId, documentId);
      if (!current || current.agent_id !== place.agentId) throw new NotFoundError('Document');
      if (current.source_type !== 'url')
        throw new ValidationError('Only web sources (source_type url) can be synced', [
          { field: 'documentId', message: 'Not a web source' },
        ]);
      if (current.sync_status === 'pending' || current.sync_status === 'syncing') return current;
      const row = await this.documents.with(trx).markForSync(current, this.clock.now());
      await this.jobs.enqueue(row.id, trx);
      return row;
    });
  }

  private authorize(auth: AuthContext, orgId: string, permission: Permission): void {
    if (!auth.organizations.has(orgId)) throw new NotFoundError('Organization');
    assertPermission(auth, permission, orgId);
  }
}
