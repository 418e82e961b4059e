import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentUpdatedPayloadSchema,
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
      'kb.document.failed',
      'kb.document.ready',
      'webhook.test',
    ]);
  });
});
