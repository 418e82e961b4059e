import { assertPermission, reachableOrganizations, type AuthContext } from '../../auth/auth-context.js';
import type { AuditEntry, AuditLogRepository } from '../../audit/audit-log.repository.js';
import type { ReadRouting } from '../../db/replicas.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import type { Page } from '../../api/pagination.js';
import { parse } from '../../api/validate.js';
import { auditLogQuery, type AuditEntryResponse } from './audit-log.schemas.js';

function toResponse(row: AuditEntry): AuditEntryResponse {
  return {
    id: row.id,
    organization_id: row.organization_id,
    agent_id: row.agent_id,
    action: row.action,
    method: row.method as AuditEntryResponse['method'],
    route: row.route,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    actor: { type: row.actor_type, user_id: row.actor_user_id, key_prefix: row.actor_key_prefix },
    request_id: row.request_id,
    details: row.details ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export class AuditLogService {
  constructor(
    private readonly entries: AuditLogRepository,
    /** The list reads from a healthy replica (the caller's own writes: the primary). */
    private readonly reads?: ReadRouting,
  ) {}

  /**
   * The organization's audit log, newest first (organization:read). A key restricted to some
   * agents sees only the entries about those agents.
   */
  async list(auth: AuthContext, organizationId: string, query: unknown): Promise<Page<AuditEntryResponse>> {
    assertPermission(auth, 'organization:read');
    const id = organizationId.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, 'organization:read', id);
    const q = parse(auditLogQuery, query ?? {}, 'Invalid query parameters');
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to)
      throw new ValidationError('Invalid query parameters', [{ field: 'to', message: 'Must not be before from' }]);
    const list = (entries: AuditLogRepository) =>
      entries.list(
        id,
        { agentId: q.agent_id?.toLowerCase(), actor: q.actor, action: q.action, from, to },
        { page: q.page, limit: q.limit },
        auth.allowedAgentIds,
      );
    const page = this.reads
      ? await this.reads.read(auth, (db) => list(this.entries.with(db)))
      : await list(this.entries);
    return { data: page.data.map(toResponse), pagination: page.pagination };
  }
}
