import { reachableOrganizations, type AuthContext } from '../../auth/auth-context.js';
import { generateApiKey } from '../../auth/api-key-format.js';
import { noteAuditResource } from '../../audit/request-context.js';
import type { Clock } from '../../clock.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import type { Knex } from 'knex';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { parse, parseBody } from '../../api/validate.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import type { ApiKeyListRecord, ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { CreateApiKeySchema, ListApiKeysQuery, RotateApiKeySchema, UpdateApiKeySchema } from './api-key.schemas.js';

/** API key management: dashboard token, developer_admin role, in the organizations where it is held. */
export class ApiKeyService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly keys: ApiKeyRepository,
    private readonly clock: Clock,
    /** Waits until this instance's credential cache has seen the change (see ReadCache.sync). */
    private readonly credentialsChanged: () => Promise<void>,
  ) {}

  private adminOrganizations(auth: AuthContext): string[] {
    const orgs = [...auth.roles].filter(([, role]) => role === 'developer_admin').map(([orgId]) => orgId);
    if (auth.kind !== 'token' || orgs.length === 0) {
      throw new ForbiddenError('API key management requires the developer_admin role');
    }
    return orgs;
  }

  /** Keys of the caller's developer_admin organizations; `is_own` marks the ones the caller created. */
  async list(auth: AuthContext, query: unknown): Promise<{ data: (ApiKeyListRecord & { is_own: boolean })[] }> {
    const orgs = this.adminOrganizations(auth);
    const { organization_id } = parse(ListApiKeysQuery, query, 'Invalid query parameters');
    const keys = await this.keys.list(organization_id ? orgs.filter((o) => o === organization_id) : orgs);
    return { data: keys.map((key) => ({ ...key, is_own: key.created_by === auth.userId })) };
  }

  async create(auth: AuthContext, body: unknown): Promise<ApiKeyRecord & { key: string }> {
    const orgs = this.adminOrganizations(auth);
    const input = parseBody(CreateApiKeySchema, body);
    const organizationId = this.homeOrganization(auth, orgs, input.organization_id);
    await this.validateReferences(auth, input);
    const { raw, hash, prefix } = generateApiKey();
    const { organization_id: _org, ...fields } = input;
    const record = await this.keys.insert({
      ...fields,
      expires_at: fields.expires_at ? new Date(fields.expires_at) : null,
      organization_id: organizationId,
      created_by: auth.userId,
      key_hash: hash,
      key_prefix: prefix,
    });
    return { key: raw, ...record };
  }

  /** One key of the caller's developer_admin organizations (never its value). */
  async get(auth: AuthContext, keyId: string): Promise<ApiKeyRecord> {
    const key = await this.keys.find(keyId, this.adminOrganizations(auth));
    if (!key) throw new NotFoundError('API key');
    return key;
  }

  /** `If-Match` is checked against the locked row. */
  async update(auth: AuthContext, keyId: string, body: unknown, conditions: WriteConditions): Promise<ApiKeyRecord> {
    const orgs = this.adminOrganizations(auth);
    if (!(await this.keys.find(keyId, orgs))) throw new NotFoundError('API key');
    if (typeof body === 'object' && body !== null && 'key' in body) {
      throw new ValidationError('Request body is invalid', [
        { field: 'key', message: 'The key value cannot be changed' },
      ]);
    }
    const input = parseBody(UpdateApiKeySchema, body);
    await this.validateReferences(auth, input);
    const { expires_at, ...changes } = input;
    const updated = await this.audited.transaction(async (trx) => {
      const current = await this.lockForWrite(trx, keyId, orgs, conditions);
      if (expires_at !== undefined) assertExpiryNotExtended(current, expires_at);
      return this.keys
        .with(trx)
        .update(
          keyId,
          orgs,
          { ...changes, ...(expires_at !== undefined ? { expires_at: expires_at ? new Date(expires_at) : null } : {}) },
          this.clock.now(),
        );
    });
    if (!updated) throw new NotFoundError('API key');
    await this.credentialsChanged();
    return updated;
  }

  async delete(auth: AuthContext, keyId: string, conditions: WriteConditions): Promise<void> {
    const orgs = this.adminOrganizations(auth);
    await this.audited.transaction(async (trx) => {
      await this.lockForWrite(trx, keyId, orgs, conditions);
      if (!(await this.keys.with(trx).delete(keyId, orgs))) throw new NotFoundError('API key');
    });
    await this.credentialsChanged();
  }

  /**
   * A new key with the old one's name, creator, home organization, permissions, agent scope, limits
   * and allowed IPs; the old key expires `overlap_seconds` from now (never later than it already
   * would). Both spend from one rate-limit budget. An inactive, expired or already rotated key is
   * 409: there is nothing in use to hand over, or its replacement exists (rotate that one).
   */
  async rotate(
    auth: AuthContext,
    keyId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<ApiKeyRecord & { key: string }> {
    const orgs = this.adminOrganizations(auth);
    if (!(await this.keys.find(keyId, orgs))) throw new NotFoundError('API key');
    const { overlap_seconds } = parseBody(RotateApiKeySchema, body);
    const { raw, hash, prefix } = generateApiKey();
    const created = await this.audited.transaction(async (trx) => {
      const old = await this.lockForWrite(trx, keyId, orgs, conditions);
      const now = this.clock.now();
      assertRotatable(old, now);
      // The audit entry belongs to the key's organization, even for an admin of several.
      noteAuditResource({ organizationId: old.organization_id });
      const keys = this.keys.with(trx);
      const record = await keys.insert({
        organization_id: old.organization_id,
        created_by: old.created_by,
        name: old.name,
        key_prefix: prefix,
        key_hash: hash,
        permissions: old.permissions,
        allowed_agent_ids: old.allowed_agent_ids,
        allowed_ips: old.allowed_ips,
        rate_limit_per_minute: old.rate_limit_per_minute,
        rate_limit_per_hour: old.rate_limit_per_hour,
        is_active: true,
        expires_at: null,
        rotated_from: old.id,
        rate_limit_budget_id: await keys.rateLimitBudget(old.id),
      });
      const overlapEnd = new Date(now.getTime() + overlap_seconds * 1000);
      const expiresAt = old.expires_at && old.expires_at < overlapEnd ? old.expires_at : overlapEnd;
      await keys.update(old.id, orgs, { rotated_to: record.id, expires_at: expiresAt }, now);
      return record;
    });
    // The old key's new expiry reaches every instance's cache before the answer (as a PATCH does).
    await this.credentialsChanged();
    return { key: raw, ...created };
  }

  /** The key's row locked for this write, after its `If-Match` (412) and the organization's rule (428). */
  private async lockForWrite(
    trx: Knex.Transaction,
    keyId: string,
    orgs: string[],
    conditions: WriteConditions,
  ): Promise<ApiKeyRecord> {
    const current = await this.keys.with(trx).findForUpdate(keyId, orgs);
    if (!current) throw new NotFoundError('API key');
    await assertWritePreconditions(trx, conditions, requiresIfMatch, {
      organizationId: current.organization_id,
      current,
    });
    return current;
  }

  private homeOrganization(auth: AuthContext, adminOrgs: string[], requested: string | undefined): string {
    if (requested) {
      if (!auth.organizations.has(requested)) throw new NotFoundError('Organization');
      if (!adminOrgs.includes(requested))
        throw new ForbiddenError('API key management requires the developer_admin role');
      return requested;
    }
    if (adminOrgs.length > 1) {
      throw new ValidationError('Request body is invalid', [
        { field: 'organization_id', message: 'Required: you are developer_admin of several organizations' },
      ]);
    }
    return adminOrgs[0]!;
  }

  /** Agents must exist where the key can reach; an expiry must lie in the future. */
  private async validateReferences(
    auth: AuthContext,
    input: { allowed_agent_ids?: string[] | null; expires_at?: string | null },
  ): Promise<void> {
    const details: ErrorDetail[] = [];
    if (input.expires_at && new Date(input.expires_at).getTime() <= this.clock.now().getTime()) {
      details.push({ field: 'expires_at', message: 'Must be in the future' });
    }
    const ids = input.allowed_agent_ids ?? [];
    const found = await this.keys.existingAgentIds(ids, reachableOrganizations(auth));
    ids.forEach((id, i) => {
      if (!found.has(id)) details.push({ field: `allowed_agent_ids[${i}]`, message: 'Agent not found' });
    });
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
  }
}

/**
 * A rotated key lives only for the overlap its rotation gave it: its expiry may come earlier, never
 * later (nor be removed), or the replaced credential would outlive its replacement's purpose.
 */
function assertExpiryNotExtended(key: ApiKeyRecord, expiresAt: string | null): void {
  if (!key.rotated_to) return;
  const current = key.expires_at?.getTime() ?? Infinity;
  const requested = expiresAt === null ? Infinity : new Date(expiresAt).getTime();
  if (requested > current) {
    throw new ConflictError(
      `API key was rotated to ${key.rotated_to}: its expiry can be brought forward, not extended or removed`,
    );
  }
}

function assertRotatable(key: ApiKeyRecord, now: Date): void {
  if (key.rotated_to) {
    throw new ConflictError(`API key was already rotated; rotate its replacement ${key.rotated_to}`);
  }
  if (!key.is_active) throw new ConflictError('API key is inactive; activate it or create a new key');
  if (key.expires_at && key.expires_at.getTime() <= now.getTime()) {
    throw new ConflictError('API key has expired; create a new key');
  }
}
