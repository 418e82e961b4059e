import { randomBytes, randomInt } from 'node:crypto';
import type { Permission, Role } from '../../src/auth/permissions.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { signDashboardToken } from '../../src/auth/token.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/knex.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';

export type World = {
  orgId: string;
  userId: string;
  agentId: string;
  /** X-API-Key with every permission and limits no test file reaches. */
  key: string;
  keyId: string;
  /** Dashboard token of a developer_admin of the organization. */
  token: string;
};

/** Fresh data for each test, through the same code the ops CLI uses. */
export class Builders {
  private readonly ops: OpsRepository;

  constructor(
    db: Db,
    private readonly config: Config,
    private readonly syncCaches: () => Promise<void>,
  ) {
    this.ops = new OpsRepository(db);
  }

  organization(name = `Org ${randomBytes(3).toString('hex')}`) {
    return this.ops.createOrganization(name);
  }

  async user(organizationId?: string, role: Role = 'developer_admin') {
    const user = await this.ops.createUser(`user-${randomBytes(6).toString('hex')}@example.com`, 'Test User');
    if (organizationId) await this.ops.addMember(user.id, organizationId, role);
    return user;
  }

  async member(userId: string, organizationId: string, role: Role) {
    await this.ops.addMember(userId, organizationId, role);
    await this.syncCaches();
  }

  async removeMember(userId: string, organizationId: string) {
    await this.ops.removeMember(userId, organizationId);
    await this.syncCaches();
  }

  token(userId: string, expiresInSeconds = 3600) {
    return signDashboardToken(this.config, userId, expiresInSeconds);
  }

  apiKey(
    organizationId: string,
    userId: string,
    options: {
      permissions?: readonly Permission[];
      allowedAgentIds?: string[] | null;
      rateLimitPerMinute?: number;
      rateLimitPerHour?: number;
      expiresAt?: Date | null;
    } = {},
  ) {
    return this.ops.createApiKey({ organizationId, userId, permissions: PERMISSIONS, ...options });
  }

  phone(): string {
    // A valid Berlin number (libphonenumber checks numbers against their country's plan).
    return `+4930${String(randomInt(10_000_000, 99_999_999))}`;
  }

  agent(organizationId: string, fields: Record<string, unknown> = {}) {
    return this.ops.createAgent(organizationId, { name: 'Agent', phone_number: this.phone(), ...fields });
  }

  /** A new agent of the organization for a test that needs one of its own; returns its id. */
  async freshAgent(organizationId: string, name = 'Agent'): Promise<string> {
    return (await this.agent(organizationId, { name })).id;
  }

  /** An organization with a developer_admin, one agent, an all-permission key and a token. */
  async world(): Promise<World> {
    const org = await this.organization();
    const user = await this.user(org.id, 'developer_admin');
    const agent = await this.agent(org.id, { name: 'Main Agent' });
    // Generous limits: a test file sends many requests with this key (rate-limit tests make their own).
    const key = await this.apiKey(org.id, user.id, { rateLimitPerMinute: 10_000, rateLimitPerHour: 1_000_000 });
    return {
      orgId: org.id,
      userId: user.id,
      agentId: agent.id,
      key: key.key,
      keyId: key.id,
      token: this.token(user.id),
    };
  }
}
