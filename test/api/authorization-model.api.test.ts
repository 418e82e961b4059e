import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/**
 * A user who is developer_admin in A (the world's organization) and `member` in B, with a key made
 * in A holding every permission, and B's own world for its agent and data.
 */
async function twoOrganizations() {
  const a = await ctx.build.world();
  const b = await ctx.build.world();
  await ctx.build.member(a.userId, b.orgId, 'member');
  return { a, b, token: ctx.build.token(a.userId) };
}

const asKey = (key: string) => ({ 'X-API-Key': key });
const asToken = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The three writes of the report, each to organization B. */
function writesTo(b: World, auth: Record<string, string>) {
  return [
    ctx.http.patch(`/v1/organization/${b.orgId}`).set(auth).send({ call_retention_days: 1 }),
    ctx.http.patch(`/v1/agents/${b.agentId}`).set(auth).send({ name: 'Taken over' }),
    ctx.http.post(`/v1/organization/${b.orgId}/data-subjects/erase`).set(auth).send({ phone_number: '+49301234567' }),
  ];
}

const stateOf = async (b: World) => ({
  org: await ctx.db('organizations').where({ id: b.orgId }).first('call_retention_days', 'updated_at'),
  agent: await ctx.db('agents').where({ id: b.agentId }).first('name', 'updated_at'),
  erasures: await ctx.db('data_subject_erasures').where({ organization_id: b.orgId }).count({ n: '*' }),
});

describe('a key holds in each organization only what its creator holds there', () => {
  it('cannot write where its creator is a member, exactly like the creator token, and changes nothing', async () => {
    const { a, b, token } = await twoOrganizations();
    const before = await stateOf(b);
    for (const auth of [asKey(a.key), asToken(token)]) {
      for (const res of await Promise.all(writesTo(b, auth))) {
        expect([res.status, res.body.error?.code]).toEqual([403, 'FORBIDDEN']);
      }
    }
    expect(await stateOf(b)).toEqual(before);
    // Reading stays: a member reads there, and so does the member's key.
    await ctx.http.get(`/v1/agents/${b.agentId}`).set(asKey(a.key)).expect(200);
    await ctx.http.get(`/v1/organization/${b.orgId}`).set(asKey(a.key)).expect(200);
    // And in A, where the creator is developer_admin, the key writes.
    await ctx.http.patch(`/v1/agents/${a.agentId}`).set(asKey(a.key)).send({ name: 'Still mine' }).expect(200);
  });

  it('loses writing on the next request after its creator is demoted, and gets it back on promotion', async () => {
    const w = await ctx.build.world();
    const rename = (name: string) => ctx.http.patch(`/v1/agents/${w.agentId}`).set(asKey(w.key)).send({ name });
    await rename('Before').expect(200);
    await ctx.build.member(w.userId, w.orgId, 'member');
    const refused = await rename('After demotion').expect(403);
    expect(refused.body.error.message).toBe('API key lacks required permission: agents:write');
    expect((await ctx.db('agents').where({ id: w.agentId }).first('name')).name).toBe('Before');
    await ctx.http.get(`/v1/agents/${w.agentId}`).set(asKey(w.key)).expect(200);
    await ctx.build.member(w.userId, w.orgId, 'admin');
    await rename('After promotion').expect(200);
  });

  it('follows a role changed elsewhere (the ops CLI, another instance) once the change is announced', async () => {
    const w = await ctx.build.world();
    const rename = (name: string) => ctx.http.patch(`/v1/agents/${w.agentId}`).set(asKey(w.key)).send({ name });
    // Served from the read cache from here on.
    await rename('Cached').expect(200);
    await rename('Cached again').expect(200);
    expect(ctx.container.cache.isListening).toBe(true);
    // Plain SQL, as another process writes it: only the trigger's announcement reaches this instance.
    await ctx.db('memberships').where({ user_id: w.userId, organization_id: w.orgId }).update({ role: 'member' });
    await expect.poll(async () => (await rename('Refused')).status, { timeout: 2000, interval: 5 }).toBe(403);
    expect((await ctx.db('agents').where({ id: w.agentId }).first('name')).name).toBe('Cached again');
  });

  it('no longer reaches an organization its creator was removed from, and is refused once none is left', async () => {
    const { a, b } = await twoOrganizations();
    await ctx.http.get(`/v1/agents/${b.agentId}`).set(asKey(a.key)).expect(200);
    await ctx.build.removeMember(a.userId, b.orgId);
    const agent = await ctx.http.get(`/v1/agents/${b.agentId}`).set(asKey(a.key)).expect(404);
    expect(agent.body.error.message).toBe('Agent not found');
    await ctx.http.get(`/v1/organization/${b.orgId}`).set(asKey(a.key)).expect(404);
    const orgs = await ctx.http.get('/v1/organization').set(asKey(a.key)).expect(200);
    expect(orgs.body.data.map((o: { id: string }) => o.id)).toEqual([a.orgId]);
    await ctx.http.get(`/v1/agents/${a.agentId}`).set(asKey(a.key)).expect(200);
    await ctx.build.removeMember(a.userId, a.orgId);
    const gone = await ctx.http.get(`/v1/agents/${a.agentId}`).set(asKey(a.key)).expect(401);
    expect(gone.body.error.message).toBe('The creator of this API key no longer belongs to any organization');
  });
});

describe('organization-wide operations and keys restricted to certain agents', () => {
  it('refuses the data-subject export and erasure with 403 AGENT_NOT_ACCESSIBLE and erases nothing', async () => {
    const w = await ctx.build.world();
    const other = await ctx.build.freshAgent(w.orgId);
    await ctx.http
      .post(`/v1/agents/${other}/calls`)
      .set(asKey(w.key))
      .send({ call_id: 'scoped-1', phone_number: '+49301234567', customer_name: 'Anna', duration: 10 })
      .expect(201);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const before = await ctx.db('calls').where({ agent_id: other }).first('customer_name', 'phone_number');
    for (const action of ['export', 'erase']) {
      for (const body of [{ phone_number: '+49301234567' }, { phone_number: '+49301234567', dry_run: true }]) {
        if (action === 'export' && 'dry_run' in body) continue;
        const res = await ctx.http
          .post(`/v1/organization/${w.orgId}/data-subjects/${action}`)
          .set(asKey(scoped.key))
          .send(body);
        expect([action, res.status, res.body.error?.code]).toEqual([action, 403, 'AGENT_NOT_ACCESSIBLE']);
      }
    }
    expect(await ctx.db('calls').where({ agent_id: other }).first('customer_name', 'phone_number')).toEqual(before);
    expect(await ctx.db('data_subject_erasures').where({ organization_id: w.orgId })).toEqual([]);
    // The same request with an unrestricted key is answered.
    await ctx.http
      .post(`/v1/organization/${w.orgId}/data-subjects/export`)
      .set(asKey(w.key))
      .send({ phone_number: '+49301234567' })
      .expect(200);
  });

  it('limits organization statistics, the agent list and the audit log to the allowed agents', async () => {
    const w = await ctx.build.world();
    const other = await ctx.build.freshAgent(w.orgId, 'Other');
    ctx.clock.set('2026-05-02T10:00:00Z');
    for (const [agentId, id] of [
      [w.agentId, 'mine-1'],
      [other, 'theirs-1'],
      [other, 'theirs-2'],
    ]) {
      await ctx.http
        .post(`/v1/agents/${agentId}/calls`)
        .set(asKey(w.key))
        .send({ call_id: id, phone_number: '+49301234567', duration: 10 })
        .expect(201);
    }
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const stats = async (key: string) =>
      (
        await ctx.http
          .get(`/v1/organization/${w.orgId}/calls/stats?from=2026-05-01&to=2026-05-03`)
          .set(asKey(key))
          .expect(200)
      ).body;
    expect((await stats(w.key)).totals.count).toBe(3);
    expect((await stats(scoped.key)).totals.count).toBe(1);
    const agents = await ctx.http.get('/v1/agents').set(asKey(scoped.key)).expect(200);
    expect(agents.body.data.map((a: { id: string }) => a.id)).toEqual([w.agentId]);
    const audit = await ctx.http.get(`/v1/organization/${w.orgId}/audit-log`).set(asKey(scoped.key)).expect(200);
    expect(audit.body.data.length).toBeGreaterThan(0);
    for (const entry of audit.body.data as { agent_id: string | null }[]) expect(entry.agent_id).toBe(w.agentId);
  });
});
