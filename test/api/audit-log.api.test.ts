import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntrySchema } from '../../src/modules/audit-log/audit-log.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

type Entry = {
  id: string;
  agent_id: string | null;
  action: string;
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  actor: { type: string; user_id: string | null; key_prefix: string | null };
  request_id: string;
  created_at: string;
};

function auditLog(query: Record<string, string> = {}, orgId = w.orgId, key = w.key) {
  return ctx.http.get(`/v1/organization/${orgId}/audit-log`).query(query).set('X-API-Key', key);
}

async function entriesFor(requestId: string): Promise<Entry[]> {
  const res = await auditLog({ limit: '100' });
  expect(res.status).toBe(200);
  expectSchema(res, paginated(AuditEntrySchema));
  return (res.body.data as Entry[]).filter((e) => e.request_id === requestId);
}

async function keyPrefix(): Promise<string> {
  const row = await ctx.db('api_keys').where({ id: w.keyId }).first('key_prefix');
  return row.key_prefix as string;
}

describe('GET /v1/organization/{orgId}/audit-log', () => {
  it('records a write in a transaction (tool create) with route, resource, key prefix and request id', async () => {
    const res = await ctx.http
      .post(`/v1/agents/${w.agentId}/tools`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-tool-create-1')
      .send({ name: 'hangup', tool_type: 'end_call', description: 'A test tool' });
    expect(res.status).toBe(201);
    const [entry] = await entriesFor('audit-tool-create-1');
    expect(entry).toMatchObject({
      agent_id: w.agentId,
      action: 'agents.tools.create',
      method: 'POST',
      route: '/v1/agents/{agentId}/tools',
      resource_type: 'tools',
      actor: { type: 'api_key', user_id: null, key_prefix: await keyPrefix() },
    });
    expectSchema({ body: entry }, AuditEntrySchema);
  });

  it('records a single-statement write (contact create) and never stores the body', async () => {
    const res = await ctx.http
      .post(`/v1/agents/${w.agentId}/contacts`)
      .set('Authorization', `Bearer ${w.token}`)
      .set('X-Request-Id', 'audit-contact-1')
      .send({ name: 'Erika Mustermann', phone_number: '+4930111222' });
    expect(res.status).toBe(201);
    const entries = await entriesFor('audit-contact-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'agents.contacts.create',
      actor: { type: 'user', user_id: w.userId, key_prefix: null },
    });
    const raw = await ctx.db('audit_log').where({ request_id: 'audit-contact-1' });
    expect(JSON.stringify(raw)).not.toContain('Mustermann');
    expect(JSON.stringify(raw)).not.toContain('4930111222');
  });

  it('records a call intake (one statement, no transaction) with the same row as a transaction writes', async () => {
    const res = await ctx.http
      .post(`/v1/agents/${w.agentId}/calls`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-intake-1')
      .send({ call_id: 'audit-intake-1', phone_number: '+4930111333', duration: 12 });
    expect(res.status).toBe(201);
    const rows = await ctx.db('audit_log').where({ request_id: 'audit-intake-1' });
    expect(rows).toHaveLength(1);
    const { id, ...row } = rows[0];
    expect(typeof id).toBe('string');
    expect(row).toEqual({
      organization_id: w.orgId,
      agent_id: w.agentId,
      action: 'agents.calls.create',
      method: 'POST',
      route: '/v1/agents/{agentId}/calls',
      resource_type: 'calls',
      resource_id: w.agentId,
      actor_type: 'api_key',
      actor_user_id: null,
      actor_key_prefix: await keyPrefix(),
      request_id: 'audit-intake-1',
      details: null,
      created_at: ctx.clock.now(),
    });
  });

  it('writes a call, its event and job and its audit row together: none of them when the row cannot be written', async () => {
    const agent = await ctx.build.agent(w.orgId, { name: 'Intake refused' });
    // Dispatch jobs whose event was never stored.
    const orphanJobs = async () =>
      (
        await ctx.db.raw(
          `SELECT count(*)::int AS n FROM pgboss.job j WHERE j.name = 'events.dispatch'
              AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = (j.data->>'eventId')::uuid)`,
        )
      ).rows[0].n as number;
    await ctx.db.raw('ALTER TABLE audit_log ADD CONSTRAINT test_refuse_entries CHECK (false) NOT VALID');
    try {
      const res = await ctx.http
        .post(`/v1/agents/${agent.id}/calls`)
        .set('X-API-Key', w.key)
        .send({ call_id: 'audit-intake-refused', duration: 12 });
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      await ctx.db.raw('ALTER TABLE audit_log DROP CONSTRAINT test_refuse_entries');
    }
    expect(await ctx.db('calls').where({ agent_id: agent.id })).toHaveLength(0);
    expect(await ctx.db('events').where({ agent_id: agent.id })).toHaveLength(0);
    expect(await orphanJobs()).toBe(0);
    // Reported again, it is stored as new, with its row.
    const again = await ctx.http
      .post(`/v1/agents/${agent.id}/calls`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-intake-again')
      .send({ call_id: 'audit-intake-refused', duration: 12 });
    expect(again.status).toBe(201);
    expect(await ctx.db('audit_log').where({ request_id: 'audit-intake-again' })).toHaveLength(1);
  });

  it('records nothing for a rejected write, a read, or a search', async () => {
    const bad = await ctx.http
      .patch(`/v1/agents/${w.agentId}`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-rejected-1')
      .send({ name: '' });
    expect(bad.status).toBe(400);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).set('X-Request-Id', 'audit-read-1');
    expect(await ctx.db('audit_log').whereIn('request_id', ['audit-rejected-1', 'audit-read-1'])).toHaveLength(0);
  });

  it('records agent PATCH and DELETE with the agent id, and keeps the entry after the agent is gone', async () => {
    const agent = await ctx.build.agent(w.orgId, { name: 'Short-lived' });
    const patched = await ctx.http
      .patch(`/v1/agents/${agent.id}`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-agent-patch')
      .send({ prompt: 'Be brief.' });
    expect(patched.status).toBe(200);
    ctx.clock.advance(1000);
    const removed = await ctx.http
      .delete(`/v1/agents/${agent.id}`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-agent-delete');
    expect(removed.status).toBe(204);
    const res = await auditLog({ agent_id: agent.id });
    expect(res.status).toBe(200);
    expectSchema(res, paginated(AuditEntrySchema));
    expect((res.body.data as Entry[]).map((e) => [e.action, e.request_id])).toEqual([
      ['agents.delete', 'audit-agent-delete'],
      ['agents.update', 'audit-agent-patch'],
    ]);
  });

  it('records the organization and id of a created agent', async () => {
    const res = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'audit-agent-create')
      .send({ name: 'New', phone_number: ctx.build.phone() });
    expect(res.status).toBe(201);
    const [entry] = await entriesFor('audit-agent-create');
    expect(entry).toMatchObject({ action: 'agents.create', agent_id: res.body.id, resource_id: res.body.id });
  });

  it('filters by action, actor and time range, newest first, with pages', async () => {
    const t0 = ctx.clock.now();
    for (const name of ['filter_a', 'filter_b', 'filter_c']) {
      ctx.clock.advance(1000);
      const res = await ctx.http
        .post(`/v1/agents/${w.agentId}/tools`)
        .set('X-API-Key', w.key)
        .send({ name, tool_type: 'end_call', description: 'A test tool' });
      expect(res.status).toBe(201);
    }
    const from = new Date(t0.getTime() + 1500).toISOString();
    const res = await auditLog({ action: 'agents.tools.create', actor: await keyPrefix(), from, limit: '1' });
    expect(res.status).toBe(200);
    expectSchema(res, paginated(AuditEntrySchema));
    expect(res.body.pagination).toMatchObject({ total: 2, pages: 2, limit: 1 });
    expect(res.body.data[0].created_at).toBe(new Date(t0.getTime() + 3000).toISOString());
    const byUser = await auditLog({ actor: w.userId, action: 'agents.tools.create' });
    expect(byUser.body.pagination.total).toBe(0);
  });

  it('refuses bad filters with 400 naming the field', async () => {
    const res = await auditLog({ from: 'yesterday', agent_id: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['agent_id', 'from']);
    const unknown = await auditLog({ colour: 'red' });
    expect(unknown.status).toBe(400);
  });

  it('is 403 without organization:read, 404 for another organization, scoped for agent-restricted keys', async () => {
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    expect((await auditLog({}, w.orgId, noRead.key)).status).toBe(403);
    const other = await ctx.build.world();
    expect((await auditLog({}, other.orgId)).status).toBe(404);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, {
      permissions: ['organization:read'],
      allowedAgentIds: [other.agentId],
    });
    const res = await auditLog({}, w.orgId, scoped.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it('writes the entry in the transaction of the change: no entry for a rolled-back write, no change without its entry', async () => {
    const agent = await ctx.build.agent(w.orgId, { name: 'Tx' });
    // A conflict found inside the transaction rolls the whole request back, entry included.
    await ctx.http
      .put(`/v1/agents/${agent.id}/workflow`)
      .set('X-API-Key', w.key)
      .send({ name: 'W', steps: [{ id: 'a', name: 'a', description: 'd', completion: 'c', tools: ['nope'] }] })
      .set('X-Request-Id', 'audit-rolled-back')
      .expect(400);
    expect(await ctx.db('audit_log').where({ request_id: 'audit-rolled-back' })).toHaveLength(0);

    // An audit entry that cannot be written takes the change down with it.
    await ctx.db.raw('ALTER TABLE audit_log ADD CONSTRAINT test_refuse_entries CHECK (false) NOT VALID');
    try {
      const res = await ctx.http
        .post(`/v1/agents/${agent.id}/tools`)
        .set('X-API-Key', w.key)
        .send({ name: 'never_stored', tool_type: 'end_call', description: 'A test tool' });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(await ctx.db('tools').where({ agent_id: agent.id, name: 'never_stored' })).toHaveLength(0);
      expect(await ctx.db('agent_versions').where({ agent_id: agent.id })).toHaveLength(0);
    } finally {
      await ctx.db.raw('ALTER TABLE audit_log DROP CONSTRAINT test_refuse_entries');
    }
  });

  it('deletes entries older than AUDIT_RETENTION_DAYS', async () => {
    const old = new Date(ctx.clock.now().getTime() - 400 * 86_400_000);
    await ctx.db('audit_log').insert({
      organization_id: w.orgId,
      action: 'agents.update',
      method: 'PATCH',
      route: '/v1/agents/{agentId}',
      resource_type: 'agents',
      actor_type: 'user',
      actor_user_id: w.userId,
      request_id: 'audit-old-entry',
      created_at: old,
    });
    expect(await ctx.internals.auditRetention.run()).toBeGreaterThanOrEqual(1);
    expect(await ctx.db('audit_log').where({ request_id: 'audit-old-entry' })).toHaveLength(0);
    expect(await ctx.db('audit_log').where({ request_id: 'audit-tool-create-1' })).toHaveLength(1);
  });
});
