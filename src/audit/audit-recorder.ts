import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AuthContext } from '../auth/auth-context.js';
import type { Clock } from '../clock.js';
import { describeRoute, openApiRoute } from './audit-entry.js';
import type { Statement } from '../db/statement.js';
import type { AuditLogRepository, NewAuditEntry } from './audit-log.repository.js';
import { currentRequestContext, isWriteMethod, requestKeyPrefix, type RequestContext } from './request-context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path values go into uuid columns: anything else (never reached by a successful write) is left out. */
function uuidOrNull(value: string | undefined): string | null {
  return value !== undefined && UUID.test(value) ? value.toLowerCase() : null;
}

/**
 * POST routes that read (search, preview, call simulation and test runs, the runtime's routing
 * answer): nothing to audit. The routing answer runs on every incoming call and changes no
 * configuration; an experiment's assignment it stores is kept in experiment_assignments.
 */
const READING_POSTS = /\/(search|preview|simulate|test-cases\/run|test-cases\/suggest|runtime\/route)$/;

/** Told of every write request's caller (read-your-writes routing, src/db/replicas.ts). */
export type WriteNotes = {
  /** Inside the write's transaction (`trx`), or after a write that had none (`trx` undefined). */
  writing(auth: AuthContext, trx?: Knex.Transaction): Promise<void>;
  /** After the write's transaction committed. */
  wrote(auth: AuthContext): void;
};

const NO_NOTES: WriteNotes = { writing: async () => {}, wrote: () => {} };

/**
 * Writes the audit row of the current write request. `inTransaction` is called by a service's
 * audited transaction (audited-transactions.ts), inside it before it commits; `statement` gives the
 * row to a service's audited single statement (the same file) to write as part of it;
 * `afterResponse` is the fallback for a write that ran without either, called before the response
 * is sent.
 */
export class AuditRecorder {
  constructor(
    private readonly entries: AuditLogRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly writes: WriteNotes = NO_NOTES,
  ) {}

  async inTransaction(trx: Knex.Transaction): Promise<void> {
    const context = currentRequestContext();
    if (context?.auth) {
      await this.writes.writing(context.auth, trx);
      context.announced = true;
    }
    if (!context || !this.auditable(context)) return;
    context.audited = true;
    const entries = this.entries.with(trx);
    const entry = await this.entry(entries, context);
    if (entry) await entries.insert(entry);
  }

  /**
   * The audit row of the current write request as a statement for the caller to run as part of its
   * own single statement (`AuditedTransactions.statement`), or none; `rolledBack` when that statement
   * failed (or its row's condition `when` did not hold), `announce` after it succeeded.
   */
  async statement(when?: string): Promise<Statement[]> {
    const context = currentRequestContext();
    if (!context || !this.auditable(context)) return [];
    context.audited = true;
    const entry = await this.entry(this.entries, context);
    return entry ? [this.entries.insertStatement(entry, when)] : [];
  }

  /** The current write request's single statement (`statement`) committed: announced at once. Never throws. */
  async announce(): Promise<void> {
    const context = currentRequestContext();
    if (!context?.auth) return;
    await this.announceCommitted(context);
    this.writes.wrote(context.auth);
  }

  /** The transaction inTransaction wrote the row in is rolled back: a retried one writes it again. */
  rolledBack(): void {
    const context = currentRequestContext();
    if (context) context.audited = false;
  }

  /** The current write request's transaction committed (after inTransaction). */
  committed(): void {
    const auth = currentRequestContext()?.auth;
    if (auth) this.writes.wrote(auth);
  }

  /** Never throws: the change is already committed and the caller is owed its answer. */
  async afterResponse(context: RequestContext, status: number): Promise<void> {
    if (status >= 400) return;
    await this.announceCommitted(context);
    if (!this.auditable(context)) return;
    context.audited = true;
    try {
      const entry = await this.entry(this.entries, context);
      if (entry) await this.entries.insert(entry);
    } catch (error) {
      this.logger.error({ err: error, request_id: context.requestId }, 'audit entry not written');
    }
  }

  /** A committed write, not yet announced, announced at once; never throws (the caller is owed its answer). */
  private async announceCommitted(context: RequestContext): Promise<void> {
    if (!context.auth || context.announced) return;
    try {
      await this.writes.writing(context.auth);
      context.announced = true;
    } catch (error) {
      this.logger.error({ err: error, request_id: context.requestId }, 'write not announced to the other instances');
    }
  }

  private auditable(context: RequestContext): boolean {
    const route = context.route();
    return (
      !context.audited &&
      !context.finished &&
      context.auth !== undefined &&
      route !== undefined &&
      isWriteMethod(context.method) &&
      !READING_POSTS.test(route)
    );
  }

  /** The row describing the request, or none (no organization of the caller's to file it under). */
  private async entry(entries: AuditLogRepository, context: RequestContext): Promise<NewAuditEntry | undefined> {
    const auth = context.auth;
    const pattern = context.route();
    if (!auth || !pattern) return undefined;
    const params = context.params();
    const described = describeRoute(context.method, pattern, params);
    const agentId = uuidOrNull(context.note.agentId ?? params.agentId);
    const organizationId =
      context.note.organizationId ??
      uuidOrNull(params.orgId) ??
      (agentId ? await entries.agentOrganization(agentId) : undefined) ??
      (auth.organizations.size === 1 ? [...auth.organizations.keys()][0] : undefined);
    // A user-level write (their own profile) with several organizations belongs to none of them.
    if (!organizationId || !auth.organizations.has(organizationId)) return undefined;
    const isKey = auth.kind === 'api_key';
    const apiKeyId = auth.apiKeyId;
    return {
      organization_id: organizationId,
      agent_id: agentId,
      action: context.note.action ?? described.action,
      method: context.method.toUpperCase(),
      route: openApiRoute(pattern),
      resource_type: context.note.resourceType ?? described.resourceType,
      resource_id: context.note.resourceId ?? described.resourceId,
      actor_type: isKey ? 'api_key' : 'user',
      actor_user_id: isKey ? null : auth.userId,
      actor_key_prefix: isKey && apiKeyId ? await requestKeyPrefix(() => entries.keyPrefix(apiKeyId)) : null,
      request_id: context.requestId,
      details: context.note.details ?? null,
      created_at: this.clock.now(),
    };
  }
}
