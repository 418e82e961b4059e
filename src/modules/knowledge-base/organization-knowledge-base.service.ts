import type { Knex } from 'knex';
import { assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Permission } from '../../auth/permissions.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { isForeignKeyViolation } from '../../db/pg-errors.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import type { Page } from '../../api/pagination.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import { parse, parseBody } from '../../api/validate.js';
import type { KnowledgeBaseJobs } from './kb.worker.js';
import { assertContentEditable } from './knowledge-base.service.js';
import { toDocument, type DocumentRow, type KnowledgeBaseRepository } from './knowledge-base.repository.js';
import {
  CreateOrganizationDocumentSchema,
  GrantsSchema,
  ListDocumentsQuery,
  UpdateOrganizationDocumentSchema,
} from './knowledge-base.schemas.js';

export type OrganizationDocument = ReturnType<typeof toDocument> & { language: string | null; agent_ids: string[] };

/**
 * Shared company knowledge, managed with the dashboard token (kb:read / kb:write in the
 * organization) and granted to agents, which read it through their own knowledge base.
 */
export class OrganizationKnowledgeBaseService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly documents: KnowledgeBaseRepository,
    private readonly jobs: KnowledgeBaseJobs,
    private readonly clock: Clock,
  ) {}

  async list(auth: AuthContext, orgId: string, query: unknown): Promise<Page<OrganizationDocument>> {
    this.authorize(auth, orgId, 'kb:read');
    const { status, ...page } = parse(ListDocumentsQuery, query, 'Invalid query parameters');
    const result = await this.documents.listOrganization(orgId, status, page);
    return { data: await this.withGrants(orgId, result.data), pagination: result.pagination };
  }

  async create(auth: AuthContext, orgId: string, body: unknown): Promise<OrganizationDocument> {
    this.authorize(auth, orgId, 'kb:write');
    const input = parseBody(CreateOrganizationDocumentSchema, body);
    await this.assertAgentsOf(orgId, input.agent_ids);
    const now = this.clock.now();
    const row = await this.audited.transaction(async (trx) => {
      const created = await this.documents.with(trx).insert({
        organization_id: orgId,
        agent_id: null,
        scope: 'organization',
        title: input.title,
        content: input.content,
        language: input.language,
        created_at: now,
        updated_at: now,
      });
      await this.documents.with(trx).replaceGrants(orgId, created.id, input.agent_ids, now);
      await this.jobs.enqueue(created.id, trx);
      return created;
    });
    return { ...toDocument(row), language: row.language, agent_ids: input.agent_ids };
  }

  async get(auth: AuthContext, orgId: string, documentId: string): Promise<OrganizationDocument> {
    this.authorize(auth, orgId, 'kb:read');
    const [document] = await this.withGrants(orgId, [await this.find(orgId, documentId)]);
    return document!;
  }

  /**
   * A changed content or language sends the document back to pending (it is indexed anew).
   * `If-Match` is checked against the locked row.
   */
  async update(
    auth: AuthContext,
    orgId: string,
    documentId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<OrganizationDocument> {
    this.authorize(auth, orgId, 'kb:write');
    await this.find(orgId, documentId);
    const input = parseBody(UpdateOrganizationDocumentSchema, body);
    await this.audited.transaction(async (trx) => {
      const current = await this.lockForWrite(trx, orgId, documentId, conditions);
      assertContentEditable(current, input.content);
      const changes = Object.fromEntries(
        Object.entries(input).filter(
          ([field, value]) => value !== undefined && value !== current[field as keyof DocumentRow],
        ),
      );
      if (Object.keys(changes).length === 0) return;
      const reprocess = 'content' in changes || 'language' in changes;
      await this.documents.with(trx).update(current, changes, reprocess, this.clock.now());
      if (reprocess) await this.jobs.enqueue(current.id, trx);
    });
    return this.get(auth, orgId, documentId);
  }

  async delete(auth: AuthContext, orgId: string, documentId: string, conditions: WriteConditions): Promise<void> {
    this.authorize(auth, orgId, 'kb:write');
    await this.find(orgId, documentId);
    await this.audited.transaction(async (trx) => {
      await this.lockForWrite(trx, orgId, documentId, conditions);
      await this.documents.with(trx).delete(orgId, documentId);
    });
  }

  /**
   * The document locked for this write, after its `If-Match` (412) and the organization's rule
   * (428). Grant replacements lock the same row, so the grants read here are the current ones.
   */
  private async lockForWrite(
    trx: Knex.Transaction,
    orgId: string,
    documentId: string,
    conditions: WriteConditions,
  ): Promise<DocumentRow> {
    const current = await this.documents.with(trx).lock(orgId, documentId);
    if (!current || current.scope !== 'organization') throw new NotFoundError('Document');
    const [shown] = await this.withGrants(orgId, [current], this.documents.with(trx));
    await assertWritePreconditions(trx, conditions, requiresIfMatch, { organizationId: orgId, current: shown });
    return current;
  }

  /** Replaces the set of agents the document is granted to. */
  async replaceGrants(auth: AuthContext, orgId: string, documentId: string, body: unknown) {
    this.authorize(auth, orgId, 'kb:write');
    await this.find(orgId, documentId);
    const { agent_ids } = parseBody(GrantsSchema, body);
    await this.assertAgentsOf(orgId, agent_ids);
    await this.audited.transaction(async (trx) => {
      // Concurrent replacements queue on the document row (the resource of the lock order in
      // src/db/locks.ts), so each one deletes and inserts alone and the last one wins.
      if (!(await this.documents.with(trx).lock(orgId, documentId))) throw new NotFoundError('Document');
      try {
        await this.documents.with(trx).replaceGrants(orgId, documentId, agent_ids, this.clock.now());
      } catch (error) {
        // An agent deleted after the check above.
        if (isForeignKeyViolation(error)) await this.assertAgentsOf(orgId, agent_ids);
        throw error;
      }
    });
    return { document_id: documentId, agent_ids };
  }

  /** Organization out of reach: 404; permission missing there: 403. API keys never get here (module access). */
  private authorize(auth: AuthContext, orgId: string, permission: Permission): void {
    if (!auth.organizations.has(orgId)) throw new NotFoundError('Organization');
    assertPermission(auth, permission, orgId);
  }

  private async find(orgId: string, documentId: string): Promise<DocumentRow> {
    const document = await this.documents.findOrganization(orgId, documentId);
    if (!document) throw new NotFoundError('Document');
    return document;
  }

  private async assertAgentsOf(orgId: string, agentIds: string[]): Promise<void> {
    const found = await this.documents.existingAgentIds(orgId, agentIds);
    const details = agentIds.flatMap((id, i) =>
      found.has(id) ? [] : [{ field: `agent_ids[${i}]`, message: 'Agent not found in this organization' }],
    );
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
  }

  private async withGrants(
    orgId: string,
    rows: DocumentRow[],
    documents: KnowledgeBaseRepository = this.documents,
  ): Promise<OrganizationDocument[]> {
    const grants = await documents.grantsOf(
      orgId,
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ ...toDocument(row), language: row.language, agent_ids: grants.get(row.id) ?? [] }));
  }
}
