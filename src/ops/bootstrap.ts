import { randomInt } from 'node:crypto';
import { signDashboardToken, type TokenConfig } from '../auth/token.js';
import type { Db } from '../db/knex.js';
import { OpsRepository } from './ops.repository.js';

export type BootstrapResult = {
  organization: { id: string; name: string };
  user: { id: string; email: string; role: 'developer_admin' };
  agent: { id: string; name: string; phone_number: string };
  dashboard_token: string;
  api_key: string;
};

/** An organization, a developer_admin, a demo agent, a dashboard token and an all-permission key. */
export async function bootstrap(
  db: Db,
  tokenConfig: TokenConfig,
  options: { organizationName?: string; email?: string } = {},
): Promise<BootstrapResult> {
  return db.transaction(async (trx) => {
    const ops = new OpsRepository(trx);
    const organization = await ops.createOrganization(options.organizationName ?? 'Demo Organization');
    const email = options.email ?? `admin+${organization.id.slice(0, 8)}@example.com`;
    const user = (await ops.findUserByEmail(email)) ?? (await ops.createUser(email, 'Demo Admin'));
    await ops.addMember(user.id, organization.id, 'developer_admin');
    const phone = `+4930${String(randomInt(10_000_000, 99_999_999))}`;
    const agent = await ops.createAgent(organization.id, {
      name: 'Demo Agent',
      phone_number: phone,
      language: 'de',
      prompt: 'Du bist die freundliche Telefonassistenz der Demo GmbH.',
      greeting: 'Guten Tag, Demo GmbH, wie kann ich helfen?',
    });
    const key = await ops.createApiKey({ organizationId: organization.id, userId: user.id, name: 'demo key' });
    return {
      organization,
      user: { ...user, role: 'developer_admin' },
      agent: { id: agent.id, name: 'Demo Agent', phone_number: phone },
      dashboard_token: signDashboardToken(tokenConfig, user.id, 30 * 24 * 3600),
      api_key: key.key,
    };
  });
}
