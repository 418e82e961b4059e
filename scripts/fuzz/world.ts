import { randomInt } from 'node:crypto';
import { signDashboardToken, type TokenConfig } from '../../src/auth/token.js';
import type { Db } from '../../src/db/knex.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import type { FuzzWorld } from './requests.js';

async function post(baseUrl: string, token: string, path: string, body: unknown, method = 'POST'): Promise<string> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { id?: string; data?: { id: string }[] };
  if (res.status >= 300) throw new Error(`seeding ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.id ?? json.data?.[0]?.id ?? '';
}

/**
 * A real organization with an admin, an agent, a key with limits no fuzz run reaches, and one of
 * every sub-resource, so that generated requests pass authentication and reach the handlers.
 */
export async function seedWorld(db: Db, tokenConfig: TokenConfig, baseUrl: string): Promise<FuzzWorld> {
  const ops = new OpsRepository(db);
  const org = await ops.createOrganization('Fuzz Organization');
  const user = await ops.createUser(`fuzz-${randomInt(1e9)}@example.com`, 'Fuzz Admin');
  await ops.addMember(user.id, org.id, 'developer_admin');
  const agent = await ops.createAgent(org.id, { name: 'Fuzz Agent', phone_number: `+4930${randomInt(1e7, 9e7)}` });
  const key = await ops.createApiKey({
    organizationId: org.id,
    userId: user.id,
    rateLimitPerMinute: 1_000_000,
    rateLimitPerHour: 100_000_000,
  });
  const token = signDashboardToken(tokenConfig, user.id, 24 * 3600);
  const agentPath = `/v1/agents/${agent.id}`;
  const ids: Record<string, string> = { orgId: org.id, agentId: agent.id, keyId: key.id };
  ids.employeeId = await post(baseUrl, token, `${agentPath}/employees`, { name: 'Erika', phone_number: '+4930777' });
  ids.toolId = await post(baseUrl, token, `${agentPath}/tools`, {
    name: 'end_it',
    tool_type: 'end_call',
    description: 'Ends the call',
    config: {},
  });
  ids.contactId = await post(baseUrl, token, `${agentPath}/contacts`, { customer_name: 'Max Muster' });
  ids.slotId = await post(baseUrl, token, `${agentPath}/forwarding-slots`, { slotnummer: '01', cases: 'Billing' });
  ids.documentId = await post(baseUrl, token, `${agentPath}/knowledge-base`, { title: 'Hours', content: 'Open 8-17.' });
  ids.callId = await post(baseUrl, token, `${agentPath}/calls`, { call_id: 'fuzz-call-1', duration: 30 });
  ids.orgDocumentId = await post(baseUrl, token, `/v1/organization/${org.id}/knowledge-base`, {
    title: 'Shared',
    content: 'Company knowledge.',
    agent_ids: [agent.id],
  });
  ids.deliveryId = '00000000-0000-4000-8000-000000000001';
  return { ids, token, key: key.key };
}
