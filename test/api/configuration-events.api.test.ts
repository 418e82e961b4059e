import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPERIMENT_EVENT_TYPES } from '../../src/events/event-recorder.js';
import {
  AgentUpdatedPayloadSchema,
  EXPERIMENT_PAYLOAD_SCHEMAS,
  PHONE_NUMBER_PAYLOAD_SCHEMAS,
  KbDocumentFailedPayloadSchema,
  KbDocumentReadyPayloadSchema,
} from '../../src/modules/webhooks/webhook-payload.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';
import { DocumentSchema } from '../../src/modules/knowledge-base/knowledge-base.schemas.js';
import { MeSchema } from '../../src/modules/me/me.schemas.js';
import { WebhookDeliverySchema } from '../../src/modules/webhooks/webhook-delivery.schemas.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';
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

const asKey = (req: ReturnType<typeof ctx.http.get>) => req.set('X-API-Key', w.key);

async function deliver(): Promise<void> {
  await runKnowledgeBaseJobs(ctx);
  await ctx.internals.webhookWorker.drain();
}

function bodies(url: string): Record<string, unknown>[] {
  return receiver.requestsTo(url).map((r) => JSON.parse(r.body));
}

describe('event-type selection per receiving URL', () => {
  it('keeps today’s defaults: the agent URL gets call.completed only, a member URL employee.forwarding_created only', async () => {
    const agentUrl = receiver.url('ok');
    const memberUrl = receiver.url('ok');
    const agent = await asKey(ctx.http.post('/v1/agents'))
      .send({ name: 'Defaults', phone_number: ctx.build.phone(), post_call_webhook_url: agentUrl })
      .expect(201);
    expectSchema(agent, AgentSchema);
    expect(agent.body.post_call_webhook_events).toEqual(['call.completed']);
    const me = await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ webhook_url: memberUrl })
      .expect(200);
    expectSchema(me, MeSchema);
    expect(me.body.webhook_events).toEqual(['employee.forwarding_created']);
    await asKey(ctx.http.patch(`/v1/agents/${agent.body.id}`))
      .send({ prompt: 'changed' })
      .expect(200);
    await deliver();
    expect(receiver.requestsTo(agentUrl)).toHaveLength(0);
    expect(receiver.requestsTo(memberUrl)).toHaveLength(0);
    await ctx.http.patch('/v1/me').set('Authorization', `Bearer ${w.token}`).send({ webhook_url: null }).expect(200);
  });

  it('sends agent.updated with the new version number, signed, to an agent URL that chose it', async () => {
    const url = receiver.url('ok');
    const agent = await asKey(ctx.http.post('/v1/agents'))
      .send({
        name: 'Watched',
        phone_number: ctx.build.phone(),
        post_call_webhook_url: url,
        post_call_webhook_events: ['call.completed', 'agent.updated'],
      })
      .expect(201);
    await deliver();
    await asKey(ctx.http.patch(`/v1/agents/${agent.body.id}`))
      .send({ prompt: 'second' })
      .expect(200);
    await deliver();
    const received = bodies(url);
    expect(received.map((b) => [b.event, b.version, b.change])).toEqual([
      ['agent.updated', 1, 'agent.created'],
      ['agent.updated', 2, 'agent.updated'],
    ]);
    expectSchema({ body: received[1] }, AgentUpdatedPayloadSchema);
    expect(receiver.requestsTo(url)[1]!.headers['webhook-signature']).toMatch(/^v1,/);
    const log = await asKey(ctx.http.get(`/v1/agents/${agent.body.id}/webhook-deliveries`)).expect(200);
    expectSchema(log, paginated(WebhookDeliverySchema));
    expect(log.body.data.map((d: { event_type: string }) => d.event_type)).toContain('agent.updated');
  });

  it('sends kb.document.ready and kb.document.failed to a member URL that chose them', async () => {
    const url = receiver.url('ok');
    await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ webhook_url: url, webhook_events: ['kb.document.ready', 'kb.document.failed'] })
      .expect(200);
    const ready = await asKey(ctx.http.post(`/v1/agents/${w.agentId}/knowledge-base`))
      .send({ title: 'Opening hours', content: 'We are open Monday to Friday from 8 to 17.' })
      .expect(201);
    expectSchema(ready, DocumentSchema);
    const empty = await asKey(ctx.http.post(`/v1/agents/${w.agentId}/knowledge-base`))
      .send({ title: 'Empty', content: '   ' })
      .expect(201);
    await deliver();
    const received = bodies(url);
    const readyEvent = received.find((b) => b.event === 'kb.document.ready');
    const failedEvent = received.find((b) => b.event === 'kb.document.failed');
    expectSchema({ body: readyEvent }, KbDocumentReadyPayloadSchema);
    expectSchema({ body: failedEvent }, KbDocumentFailedPayloadSchema);
    expect(readyEvent).toMatchObject({
      document: { id: ready.body.id, title: 'Opening hours', agent_id: w.agentId, status: 'ready' },
    });
    expect(failedEvent).toMatchObject({ document: { id: empty.body.id, status: 'error', chunk_count: 0 } });
    expect(received.some((b) => b.event === 'employee.forwarding_created')).toBe(false);
    await ctx.http.patch('/v1/me').set('Authorization', `Bearer ${w.token}`).send({ webhook_url: null }).expect(200);
  });

  it('refuses unknown or repeated event types with 400 naming the field', async () => {
    const res = await asKey(ctx.http.patch(`/v1/agents/${w.agentId}`))
      .send({ post_call_webhook_events: ['call.completed', 'employee.forwarding_created'] })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['post_call_webhook_events[1]']);
    const twice = await asKey(ctx.http.patch(`/v1/agents/${w.agentId}`))
      .send({ post_call_webhook_events: ['agent.updated', 'agent.updated'] })
      .expect(400);
    expect(twice.body.error.details.map((d: { field: string }) => d.field)).toEqual(['post_call_webhook_events[1]']);
    const stored = await ctx.db('agents').where({ id: w.agentId }).first('post_call_webhook_events');
    expect(stored.post_call_webhook_events).toEqual(['call.completed']);
    const me = await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ webhook_events: ['call.completed'] })
      .expect(400);
    expect(me.body.error.details[0].field).toBe('webhook_events[0]');
  });

  it('lists the new events in the OpenAPI webhooks section', async () => {
    const doc = await ctx.http.get('/v1/openapi.json').expect(200);
    expect(Object.keys(doc.body.webhooks).sort()).toEqual([
      'agent.updated',
      'call.completed',
      'data_subject.erased',
      'employee.forwarding_created',
      'experiment.created',
      'experiment.ended',
      'experiment.started',
      'experiment.stopped',
      'kb.document.failed',
      'kb.document.ready',
      'phone_number.created',
      'phone_number.deleted',
      'phone_number.updated',
      'webhook.test',
    ]);
  });
});

describe('phone number and experiment events', () => {
  const eventsOf = (organizationId: string, prefix: string) =>
    ctx
      .db('events')
      .where({ organization_id: organizationId })
      .whereLike('type', `${prefix}.%`)
      .orderBy('created_at')
      .orderBy('id')
      .select('type', 'agent_id', 'payload');

  it('records phone_number.created, .updated and .deleted with the write and sends them to every URL that chose them', async () => {
    const world = await ctx.build.world();
    const memberUrl = receiver.url('ok');
    const agentUrl = receiver.url('ok');
    await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${world.token}`)
      .send({ webhook_url: memberUrl, webhook_events: ['phone_number.created', 'phone_number.deleted'] })
      .expect(200);
    // An agent URL receives the organization's number events it chose, whichever agent holds the number.
    const watcher = await ctx.build.agent(world.orgId, { name: 'Watcher' });
    await ctx.http
      .patch(`/v1/agents/${watcher.id}`)
      .set('X-API-Key', world.key)
      .send({
        post_call_webhook_url: agentUrl,
        post_call_webhook_events: ['phone_number.created', 'phone_number.updated', 'phone_number.deleted'],
      })
      .expect(200);
    const asWorld = <T extends { set(name: string, value: string): T }>(req: T) => req.set('X-API-Key', world.key);
    const previous = (await ctx.db('phone_numbers').where({ agent_id: world.agentId }).first()) as { id: string };
    const created = await asWorld(ctx.http.post('/v1/phone-numbers'))
      .send({
        number: ctx.build.phone(),
        label: 'Zentrale',
        agent_id: world.agentId,
        sip: { termination_uri: 'sip:trunk.example.com', username: 'zentrale', password: 'geheim-4711' },
      })
      .expect(201);
    await asWorld(ctx.http.patch(`/v1/phone-numbers/${created.body.id}`))
      .send({ label: 'Empfang' })
      .expect(200);
    // Refused writes record nothing: the agent's only number stays, so does its event count.
    await asWorld(ctx.http.delete(`/v1/phone-numbers/${created.body.id}`)).expect(409);
    await asWorld(ctx.http.delete(`/v1/phone-numbers/${previous.id}`)).expect(204);

    // The number's creation released the agent's previous number in the same transaction: two events
    // of one moment, in no particular order.
    const recorded = await eventsOf(world.orgId, 'phone_number');
    const facts = recorded.map((e) => `${e.type} ${e.agent_id} ${e.payload.phone_number.id}`);
    expect(facts.slice(0, 2).sort()).toEqual(
      [`phone_number.created null ${created.body.id}`, `phone_number.updated null ${previous.id}`].sort(),
    );
    expect(facts.slice(2)).toEqual([
      `phone_number.updated null ${created.body.id}`,
      `phone_number.deleted null ${previous.id}`,
    ]);
    const payloadOf = (type: string, id: string) =>
      recorded.find((e) => e.type === type && e.payload.phone_number.id === id)!.payload.phone_number;
    expect(payloadOf('phone_number.updated', previous.id).agent_id).toBeNull();
    expect(payloadOf('phone_number.created', created.body.id)).toMatchObject({
      label: 'Zentrale',
      agent_id: world.agentId,
    });
    expect(recorded[2]!.payload.phone_number.label).toBe('Empfang');

    await deliver();
    const member = bodies(memberUrl);
    expect(member.map((b) => b.event).sort()).toEqual(['phone_number.created', 'phone_number.deleted']);
    expectSchema({ body: member.find((b) => b.event === 'phone_number.created') }, PHONE_NUMBER_PAYLOAD_SCHEMAS[0]!);
    expect(JSON.stringify(recorded)).not.toContain('geheim-4711');
    expect(member.find((b) => b.event === 'phone_number.created')).toMatchObject({
      phone_number: { sip_configured: true },
    });
    expect(
      bodies(agentUrl)
        .map((b) => b.event)
        .sort(),
    ).toEqual(['phone_number.created', 'phone_number.deleted', 'phone_number.updated', 'phone_number.updated']);
    await ctx.http
      .patch('/v1/me')
      .set('Authorization', `Bearer ${world.token}`)
      .send({ webhook_url: null })
      .expect(200);
  });

  it('records experiment.created, .started, .stopped and .ended and sends them to the agent URL that chose them', async () => {
    const url = receiver.url('ok');
    const agent = await asKey(ctx.http.post('/v1/agents'))
      .send({
        name: 'Experimente',
        phone_number: ctx.build.phone(),
        post_call_webhook_url: url,
        post_call_webhook_events: EXPERIMENT_EVENT_TYPES,
      })
      .expect(201);
    const path = `/v1/agents/${agent.body.id}/experiments`;
    const body = (extra: object = {}) => ({
      name: 'Begrüßung',
      variants: [
        { name: 'A', current: true, weight: 50 },
        { name: 'B', current: true, weight: 50 },
      ],
      ...extra,
    });
    const stopped = await asKey(ctx.http.post(path)).send(body()).expect(201);
    await asKey(ctx.http.post(`${path}/${stopped.body.id}/start`)).expect(200);
    await asKey(ctx.http.post(`${path}/${stopped.body.id}/stop`)).expect(200);
    await asKey(ctx.http.post(`${path}/${stopped.body.id}/stop`)).expect(409);
    // The route answer that assigns the last call max_calls allows ends the experiment.
    const limited = await asKey(ctx.http.post(path))
      .send(body({ max_calls: 1 }))
      .expect(201);
    await asKey(ctx.http.post(`${path}/${limited.body.id}/start`)).expect(200);
    const route = await asKey(ctx.http.post('/v1/runtime/route'))
      .send({ called_number: agent.body.phone_number, call_id: 'events-1' })
      .expect(200);
    expect(route.body.experiment.id).toBe(limited.body.id);

    const recorded = await eventsOf(w.orgId, 'experiment');
    expect(recorded.map((e) => [e.type, e.agent_id, e.payload.experiment.id, e.payload.experiment.status])).toEqual([
      ['experiment.created', agent.body.id, stopped.body.id, 'draft'],
      ['experiment.started', agent.body.id, stopped.body.id, 'running'],
      ['experiment.stopped', agent.body.id, stopped.body.id, 'stopped'],
      ['experiment.created', agent.body.id, limited.body.id, 'draft'],
      ['experiment.started', agent.body.id, limited.body.id, 'running'],
      ['experiment.ended', agent.body.id, limited.body.id, 'ended'],
    ]);
    expect(recorded[5]!.payload.experiment).toMatchObject({ end_reason: 'max_calls', calls: 1 });

    await deliver();
    const received = bodies(url);
    expect(received.map((b) => b.event).sort()).toEqual(recorded.map((e) => e.type).sort());
    for (const [i, type] of EXPERIMENT_EVENT_TYPES.entries())
      expectSchema({ body: received.find((b) => b.event === type) }, EXPERIMENT_PAYLOAD_SCHEMAS[i]!);
  });
});
