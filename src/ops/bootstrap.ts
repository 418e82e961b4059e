import { randomInt } from 'node:crypto';
import { signDashboardToken, type TokenConfig } from '../auth/token.js';
import { NEW_AGENT_DEFAULTS } from '../db/agent-defaults.js';
import { inTransaction, type Db } from '../db/knex.js';
import { OpsRepository } from './ops.repository.js';

/** The demo key's limits: the highest a key may have, so the guides' scripts never meet a 429. */
export const DEMO_KEY_LIMITS = { rateLimitPerMinute: 600, rateLimitPerHour: 10_000 } as const;
const TOKEN_TTL_SECONDS = 30 * 24 * 3600;

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
  const repository = new OpsRepository(db);
  return inTransaction(db, async (trx) => {
    const ops = repository.with(trx);
    const organization = await ops.createOrganization(options.organizationName ?? 'Demo Organization');
    const email = options.email ?? `admin+${organization.id.slice(0, 8)}@example.com`;
    const user = (await ops.findUserByEmail(email)) ?? (await ops.createUser(email, 'Demo Admin'));
    await ops.addMember(user.id, organization.id, 'developer_admin');
    const phone = `+4930${String(randomInt(10_000_000, 99_999_999))}`;
    // The same defaults as an agent created through POST /v1/agents.
    const agent = await ops.createAgent(organization.id, {
      ...NEW_AGENT_DEFAULTS,
      name: 'Demo Agent',
      phone_number: phone,
      prompt: 'Du bist die freundliche Telefonassistenz der Demo GmbH.',
      greeting: 'Guten Tag, Demo GmbH, wie kann ich helfen?',
    });
    const key = await ops.createApiKey({
      organizationId: organization.id,
      userId: user.id,
      name: 'demo key',
      ...DEMO_KEY_LIMITS,
    });
    return {
      organization,
      user: { ...user, role: 'developer_admin' },
      agent: { id: agent.id, name: 'Demo Agent', phone_number: phone },
      dashboard_token: signDashboardToken(tokenConfig, user.id, TOKEN_TTL_SECONDS),
      api_key: key.key,
    };
  });
}

export type CredentialsResult = {
  organization: { id: string; name: string };
  user: { id: string; email: string };
  agent: { id: string; name: string } | null;
  dashboard_token: string;
  dashboard_token_expires_in: number;
  /** Only with `newKey`: keys are stored hashed, so an old one cannot be shown again. */
  api_key?: string;
};

/**
 * Credentials again, after the first start's output is gone: a fresh dashboard token for the
 * organization's developer_admin and, on request, a new all-permission key with the demo limits.
 * The oldest organization (the demo one) unless another is named.
 */
export async function credentials(
  db: Db,
  tokenConfig: TokenConfig,
  options: { organizationId?: string; newKey?: boolean } = {},
): Promise<CredentialsResult> {
  const ops = new OpsRepository(db);
  const target = await ops.findCredentialTarget(options.organizationId);
  if (!target) {
    throw new Error(
      options.organizationId
        ? `No organization ${options.organizationId} with a developer_admin`
        : 'No organization yet: run npm start (or npm run cli -- bootstrap) first',
    );
  }
  const result: CredentialsResult = {
    ...target,
    dashboard_token: signDashboardToken(tokenConfig, target.user.id, TOKEN_TTL_SECONDS),
    dashboard_token_expires_in: TOKEN_TTL_SECONDS,
  };
  if (options.newKey) {
    const key = await ops.createApiKey({
      organizationId: target.organization.id,
      userId: target.user.id,
      name: 'credentials key',
      ...DEMO_KEY_LIMITS,
    });
    result.api_key = key.key;
  }
  return result;
}

/** Shell lines that set BASE, KEY, TOKEN and AGENT (KEY only when a key is at hand). */
export function shellExports(
  base: string,
  values: { apiKey?: string; token: string; agentId?: string | null },
): string {
  const lines = [`export BASE=${base}`];
  if (values.apiKey) lines.push(`export KEY=${values.apiKey}`);
  lines.push(`export TOKEN=${values.token}`);
  if (values.agentId) lines.push(`export AGENT=${values.agentId}`);
  return lines.join('\n');
}
