import type { Knex } from 'knex';
import { generateApiKey } from '../auth/api-key-format.js';
import { PERMISSIONS, type Permission, type Role } from '../auth/permissions.js';
import type { Db } from '../db/knex.js';

/** Writes behind the ops CLI (and the test builders): identities that the public API does not create. */
export class OpsRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): OpsRepository {
    return new OpsRepository(trx);
  }

  async createOrganization(name: string): Promise<{ id: string; name: string }> {
    const [org] = await this.db('organizations').insert({ name }).returning(['id', 'name']);
    return org;
  }

  async createUser(email: string, name: string): Promise<{ id: string; email: string }> {
    const [user] = await this.db('users').insert({ email: email.toLowerCase(), name }).returning(['id', 'email']);
    return user;
  }

  async findUserByEmail(email: string): Promise<{ id: string; email: string } | undefined> {
    return this.db('users').where({ email: email.toLowerCase() }).first('id', 'email');
  }

  async addMember(userId: string, organizationId: string, role: Role): Promise<void> {
    await this.db('memberships')
      .insert({ user_id: userId, organization_id: organizationId, role })
      .onConflict(['user_id', 'organization_id'])
      .merge(['role']);
  }

  async removeMember(userId: string, organizationId: string): Promise<void> {
    await this.db('memberships').where({ user_id: userId, organization_id: organizationId }).delete();
  }

  /** Returns the raw key; only its hash is stored. */
  async createApiKey(input: {
    organizationId: string;
    userId: string;
    name?: string;
    permissions?: readonly Permission[];
    allowedAgentIds?: string[] | null;
    rateLimitPerMinute?: number;
    rateLimitPerHour?: number;
    expiresAt?: Date | null;
  }): Promise<{ id: string; key: string }> {
    const { raw, hash, prefix } = generateApiKey();
    const [row] = await this.db('api_keys')
      .insert({
        organization_id: input.organizationId,
        created_by: input.userId,
        name: input.name ?? 'ops key',
        key_hash: hash,
        key_prefix: prefix,
        permissions: [...(input.permissions ?? PERMISSIONS)],
        allowed_agent_ids: input.allowedAgentIds ?? null,
        rate_limit_per_minute: input.rateLimitPerMinute ?? 60,
        rate_limit_per_hour: input.rateLimitPerHour ?? 1000,
        expires_at: input.expiresAt ?? null,
      })
      .returning(['id']);
    return { id: row.id, key: raw };
  }

  async createAgent(
    organizationId: string,
    fields: { name: string; phone_number: string; [k: string]: unknown },
  ): Promise<{ id: string }> {
    const [row] = await this.db('agents')
      .insert({ organization_id: organizationId, ...fields })
      .returning(['id']);
    return row;
  }

  /**
   * The organization `credentials` serves: the given one, or the oldest (the demo organization of
   * the first start), with its first developer_admin and its oldest agent.
   */
  async findCredentialTarget(organizationId?: string): Promise<
    | {
        organization: { id: string; name: string };
        user: { id: string; email: string };
        agent: { id: string; name: string } | null;
      }
    | undefined
  > {
    const orgQuery = this.db('organizations').orderBy([{ column: 'created_at' }, { column: 'id' }]);
    if (organizationId) orgQuery.where({ id: organizationId });
    const organization = await orgQuery.first('id', 'name');
    if (!organization) return undefined;
    const user = await this.db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where({ 'm.organization_id': organization.id, 'm.role': 'developer_admin' })
      .orderBy([{ column: 'm.created_at' }, { column: 'u.id' }])
      .first('u.id', 'u.email');
    if (!user) return undefined;
    const agent = await this.db('agents')
      .where({ organization_id: organization.id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .first('id', 'name');
    return { organization, user, agent: agent ?? null };
  }

  async countOrganizations(): Promise<number> {
    const row = await this.db('organizations').count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }
}
