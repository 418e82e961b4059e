import {
  assertPermission,
  organizationsWith,
  reachableOrganizations,
  type AuthContext,
} from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { parseBody } from '../../api/validate.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch, type OrganizationRepository, type OrganizationRow } from './organization.repository.js';
import { OrganizationPatchSchema } from './organization.schemas.js';

export class OrganizationService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly organizations: OrganizationRepository,
    private readonly clock: Clock,
  ) {}

  /** Every organization the caller reaches with organization:read (for a key: its creator's). */
  async list(auth: AuthContext): Promise<{ data: OrganizationRow[] }> {
    assertPermission(auth, 'organization:read');
    return { data: await this.organizations.listByIds(organizationsWith(auth, 'organization:read')) };
  }

  /** One organization the caller reaches with organization:read. */
  async get(auth: AuthContext, organizationId: string): Promise<OrganizationRow> {
    assertPermission(auth, 'organization:read');
    const id = organizationId.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, 'organization:read', id);
    const row = await this.organizations.findById(id);
    if (!row) throw new NotFoundError('Organization');
    return row;
  }

  /**
   * organization:write: 404 for an organization out of reach, 403 without the permission there.
   * `If-Match` is checked against the locked row.
   */
  async update(
    auth: AuthContext,
    organizationId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<OrganizationRow> {
    assertPermission(auth, 'organization:write');
    const id = organizationId.toLowerCase();
    if (!reachableOrganizations(auth).includes(id)) throw new NotFoundError('Organization');
    assertPermission(auth, 'organization:write', id);
    const patch = parseBody(OrganizationPatchSchema, body);
    const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    return this.audited.transaction(async (trx) => {
      const organizations = this.organizations.with(trx);
      const current = await organizations.findForUpdate(id);
      if (!current) throw new NotFoundError('Organization');
      await assertWritePreconditions(trx, conditions, requiresIfMatch, { organizationId: id, current });
      if (Object.keys(changes).length === 0) return current;
      const row = await organizations.update(id, { ...changes, updated_at: this.clock.now() });
      if (!row) throw new NotFoundError('Organization');
      return row;
    });
  }

  /**
   * `PATCH /v1/organization` without an id (older TalkPilot pages): the one organization the caller
   * may change, or an API key's home organization; otherwise the id must be given.
   */
  async updateImplicit(auth: AuthContext, body: unknown, conditions: WriteConditions): Promise<OrganizationRow> {
    assertPermission(auth, 'organization:write');
    const writable = organizationsWith(auth, 'organization:write');
    const home = auth.apiKeyId ? await this.organizations.homeOfApiKey(auth.apiKeyId) : undefined;
    const target = writable.length === 1 ? writable[0] : home && writable.includes(home) ? home : undefined;
    if (!target) {
      throw new ValidationError('Several organizations are reachable: use PATCH /v1/organization/{orgId}', [
        { field: 'orgId', message: 'Required when the caller can change several organizations' },
      ]);
    }
    return this.update(auth, target, body, conditions);
  }
}
