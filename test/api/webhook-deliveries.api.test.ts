import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-recorder.js';
import { WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

let ctx: TestContext;
let w: World;
let receiver: Receiver;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

const NIL = '00000000-0000-4000-8000-000000000000';

async function record(event: NewEvent): Promise<string> {
  return ctx.db.transaction((trx) => ctx.internals.events.record(trx, event));
}

/** An agent of `world` with a webhook and `count` delivered call events, oldest first. */
async function agentWithDeliveries(world: World, count: number, kind: 'ok' | 'fail' = 'ok') {
  const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: receiver.url(kind) });
  const eventIds: string[] = [];
  for (let i = 0; i < count; i++) {
    eventIds.push(
      await record({
        organization_id: world.orgId,
        agent_id: agent.id,
        type: 'call.completed',
        payload: { call: { id: `c${i}` } },
      }),
    );
    await ctx.internals.webhookWorker.drain();
    ctx.clock.advance(1000);
  }
  const deliveries = await ctx.db('webhook_deliveries').where({ agent_id: agent.id }).orderBy('created_at', 'desc');
  return { agentId: agent.id, eventIds, deliveryIds: deliveries.map((d: { id: string }) => d.id) };
}

const list = (agentId: string, key: string, query = '') =>
  ctx.http.get(`/v1/agents/${agentId}/webhook-deliveries${query}`).set('X-API-Key', key);
const redeliver = (agentId: string, deliveryId: string, key: string) =>
  ctx.http.post(`/v1/agents/${agentId}/webhook-deliveries/${deliveryId}/redeliver`).set('X-API-Key', key);

async function queuedSends(deliveryId: string): Promise<number> {
  const rows = await ctx
    .db('pgboss.job')
    .where({ name: WEBHOOK_SEND_QUEUE })
    .whereRaw(`data->>'deliveryId' = ?`, [deliveryId]);
  return rows.length;
}

describe('GET /v1/agents/{agentId}/webhook-deliveries', () => {
  it('lists the deliveries newest first with pagination', async () => {
    const { agentId, deliveryIds } = await agentWithDeliveries(w, 3);
    const page1 = await list(agentId, w.key, '?limit=2').expect(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
    expect(page1.body.data.map((d: { id: string }) => d.id)).toEqual(deliveryIds.slice(0, 2));
    const page2 = await list(agentId, w.key, '?limit=2&page=2').expect(200);
    expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual(deliveryIds.slice(2));
    const past = await list(agentId, w.key, '?page=9').expect(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 9, limit: 20, total: 3, pages: 1 } });
  });

  it('filters by status', async () => {
    const ok = await agentWithDeliveries(w, 1, 'ok');
    const res = await list(ok.agentId, w.key, '?status=failed').expect(200);
    expect(res.body.data).toEqual([]);
    expect((await list(ok.agentId, w.key, '?status=succeeded').expect(200)).body.data).toHaveLength(1);
  });

  it('rejects a bad status filter and bad pagination, naming every parameter', async () => {
    const res = await list(w.agentId, w.key, '?status=done&limit=0').expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['limit', 'status']);
  });

  it('does not show the deliveries of another agent of the same organization', async () => {
    const { agentId } = await agentWithDeliveries(w, 1);
    const other = await ctx.build.agent(w.orgId);
    expect((await list(other.id, w.key).expect(200)).body.data).toEqual([]);
    expect((await list(agentId, w.key).expect(200)).body.data).toHaveLength(1);
  });

  it('is 403 FORBIDDEN naming agents:read for a key without it', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['calls:read'] });
    const res = await list(w.agentId, key.key).expect(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'Missing permission: agents:read' });
  });

  it('is 403 AGENT_NOT_ACCESSIBLE for an agent outside the key scope', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    const res = await list(w.agentId, key.key).expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });

  it('is 404 for an agent of another organization and for an unknown agent', async () => {
    const other = await ctx.build.world();
    await agentWithDeliveries(other, 1);
    expect((await list(other.agentId, w.key).expect(404)).body.error.code).toBe('NOT_FOUND');
    await list(NIL, w.key).expect(404);
  });

  it('is 400 naming agentId when it is not a UUID', async () => {
    const res = await list('nope', w.key).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });

  it('works with a dashboard token, for a member too', async () => {
    const { agentId } = await agentWithDeliveries(w, 1);
    await ctx.http
      .get(`/v1/agents/${agentId}/webhook-deliveries`)
      .set('Authorization', `Bearer ${w.token}`)
      .expect(200);
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .get(`/v1/agents/${agentId}/webhook-deliveries`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .expect(200);
  });
});

describe('POST /v1/agents/{agentId}/webhook-deliveries/{deliveryId}/redeliver', () => {
  it('answers 202 with the delivery pending and queues exactly one new attempt', async () => {
    const { agentId, deliveryIds } = await agentWithDeliveries(w, 1, 'fail');
    const res = await redeliver(agentId, deliveryIds[0]!, w.key).expect(202);
    expect(res.body).toMatchObject({ id: deliveryIds[0], status: 'pending', attempt_count: 1, http_status: 500 });
    expect(await queuedSends(deliveryIds[0]!)).toBe(2);
    await ctx.internals.webhookWorker.drain();
    const after = await list(agentId, w.key).expect(200);
    expect(after.body.data[0]).toMatchObject({ status: 'failed', attempt_count: 2 });
  });

  it('is 403 FORBIDDEN naming agents:write for a read-only key, and queues nothing', async () => {
    const { agentId, deliveryIds } = await agentWithDeliveries(w, 1);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const res = await redeliver(agentId, deliveryIds[0]!, key.key).expect(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'Missing permission: agents:write' });
    expect(await queuedSends(deliveryIds[0]!)).toBe(1);
    expect(await ctx.db('webhook_deliveries').where({ id: deliveryIds[0] }).first()).toMatchObject({
      status: 'succeeded',
    });
  });

  it('is 403 FORBIDDEN for a dashboard member, who holds only read permissions', async () => {
    const { agentId, deliveryIds } = await agentWithDeliveries(w, 1);
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .post(`/v1/agents/${agentId}/webhook-deliveries/${deliveryIds[0]}/redeliver`)
      .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
      .expect(403);
    expect(await queuedSends(deliveryIds[0]!)).toBe(1);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE for an agent outside the key scope, and queues nothing', async () => {
    const { agentId, deliveryIds } = await agentWithDeliveries(w, 1);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    expect((await redeliver(agentId, deliveryIds[0]!, key.key).expect(403)).body.error.code).toBe(
      'AGENT_NOT_ACCESSIBLE',
    );
    expect(await queuedSends(deliveryIds[0]!)).toBe(1);
  });

  it('is 404 for a delivery of another agent, and queues nothing', async () => {
    const { deliveryIds } = await agentWithDeliveries(w, 1);
    const res = await redeliver(w.agentId, deliveryIds[0]!, w.key).expect(404);
    expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Webhook delivery not found' });
    expect(await queuedSends(deliveryIds[0]!)).toBe(1);
  });

  it('is 404 for an agent and a delivery of another organization, and queues nothing', async () => {
    const other = await ctx.build.world();
    const { agentId, deliveryIds } = await agentWithDeliveries(other, 1);
    await redeliver(agentId, deliveryIds[0]!, w.key).expect(404);
    await redeliver(w.agentId, deliveryIds[0]!, w.key).expect(404);
    await redeliver(w.agentId, NIL, w.key).expect(404);
    expect(await queuedSends(deliveryIds[0]!)).toBe(1);
  });

  it('is 400 naming each malformed path parameter', async () => {
    const res = await redeliver('x', 'y', w.key).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'agentId', message: 'Must be a UUID' },
      { field: 'deliveryId', message: 'Must be a UUID' },
    ]);
  });

  it('answers 405 for another method on the route', async () => {
    const res = await ctx.http
      .get(`/v1/agents/${w.agentId}/webhook-deliveries/${NIL}/redeliver`)
      .set('X-API-Key', w.key)
      .expect(405);
    expect(res.headers.allow).toBe('POST');
  });
});

describe('employee events in the delivery log', () => {
  it('appear under the agent named on the event and under no other agent', async () => {
    const url = receiver.url('ok');
    await ctx.db('users').where({ id: w.userId }).update({ webhook_url: url });
    const employeeAgent = await ctx.build.agent(w.orgId);
    await record({
      organization_id: w.orgId,
      agent_id: employeeAgent.id,
      type: 'employee.forwarding_created',
      payload: { event: 'employee.forwarding_created', employee: { name: 'A' }, agents: [], reasons: [] },
    });
    await ctx.internals.webhookWorker.drain();
    await ctx.db('users').where({ id: w.userId }).update({ webhook_url: null });

    const res = await list(employeeAgent.id, w.key).expect(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({
        event_type: 'employee.forwarding_created',
        target_kind: 'member',
        target_url: url,
        status: 'succeeded',
      }),
    ]);
    const main = await list(w.agentId, w.key).expect(200);
    expect(
      main.body.data.filter((d: { event_type: string }) => d.event_type === 'employee.forwarding_created'),
    ).toEqual([]);
  });
});

describe('OpenAPI document', () => {
  it('lists the routes and both webhook payloads', async () => {
    const res = await ctx.http.get('/v1/openapi.json').expect(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/agents/{agentId}/webhook-deliveries',
        '/v1/agents/{agentId}/webhook-deliveries/{deliveryId}/redeliver',
        '/v1/organization/{orgId}/webhook-secret',
        '/v1/organization/{orgId}/webhook-secret/rotate',
        '/v1/me',
      ]),
    );
    expect(Object.keys(res.body.webhooks)).toEqual(['call.completed', 'employee.forwarding_created']);
    const call = res.body.webhooks['call.completed'].post;
    expect(call.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CallCompletedWebhook');
    expect(call.parameters.map((p: { name: string }) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    expect(Object.keys(res.body.components.schemas.WebhookCall.properties)).toEqual(
      expect.arrayContaining(['id', 'call_id', 'duration', 'transcript', 'employee', 'agent_id', 'created_at']),
    );
  });
});
