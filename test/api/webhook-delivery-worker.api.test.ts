import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-recorder.js';
import { EVENT_DISPATCH_QUEUE, WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import { JobQueue } from '../../src/jobs/queue.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { WebhookDeliverySchema } from '../../src/modules/webhooks/webhook-delivery.schemas.js';
import { WebhookSecretSchema } from '../../src/modules/webhooks/webhook.openapi.js';
import { buildInternals } from '../support/internals.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

/** The receiver from the README, verbatim: verifies a delivery with nothing but node:crypto. */
function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): boolean {
  const key = Buffer.from(secret.split('_')[1]!, 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${rawBody}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  if (Math.abs(Date.now() / 1000 - Number(headers['webhook-timestamp'])) > 300) return false;
  return String(headers['webhook-signature'])
    .split(' ')
    .some((s) => {
      const given = Buffer.from(s.split(',')[1] ?? '', 'base64');
      return s.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

let ctx: TestContext;
let w: World;
let receiver: Receiver;
const TIMEOUT_MS = 300;

beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
  w = await ctx.build.world();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

const callPayload = (agentId: string) => ({
  event: 'call.completed',
  call: {
    id: '5b0f7c2e-6a43-4f4e-9d53-1f0c7a1f9a01',
    call_id: 'tel-123',
    customer_name: 'Erika Mustermann',
    customer_request: 'Termin verschieben',
    phone_number: '+4930123456',
    duration: 95,
    done: false,
    general_success: true,
    disconnection_reason: 'user_hangup',
    call_summary: 'Wants to move the appointment.',
    transcript: JSON.stringify([
      { role: 'agent', text: 'Guten Tag' },
      { role: 'user', text: 'Hallo' },
    ]),
    employee: null,
    agent_id: agentId,
    created_at: '2026-11-21T09:00:00.000Z',
  },
});

async function record(event: NewEvent): Promise<string> {
  return ctx.db.transaction((trx) => ctx.internals.events.record(trx, event));
}

async function agentWithWebhook(url: string | null): Promise<string> {
  const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
  return agent.id;
}

async function recordCall(agentId: string): Promise<string> {
  return record({ organization_id: w.orgId, agent_id: agentId, type: 'call.completed', payload: callPayload(agentId) });
}

type DeliveryBody = Record<string, unknown> & {
  id: string;
  attempts: { attempt: number; trigger: string; status: string }[];
};

async function deliveriesOf(agentId: string) {
  const res = await ctx.http.get(`/v1/agents/${agentId}/webhook-deliveries`).set('X-API-Key', w.key).expect(200);
  expectSchema(res, paginated(WebhookDeliverySchema));
  return res.body.data as Array<DeliveryBody>;
}

async function secretOf(orgId: string, token: string): Promise<string> {
  const res = await ctx.http
    .get(`/v1/organization/${orgId}/webhook-secret`)
    .set('Authorization', `Bearer ${token}`)
    .expect(200);
  expectSchema(res, WebhookSecretSchema);
  return res.body.secret;
}

describe('call.completed delivery', () => {
  it("posts the spec's body to the agent's post_call_webhook_url with Standard Webhooks headers that verify", async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    const eventId = await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();

    const [request] = receiver.requestsTo(url);
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['webhook-id']).toBe(eventId);
    expect(request!.headers['webhook-timestamp']).toBe(String(Math.floor(ctx.clock.now().getTime() / 1000)));
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(JSON.parse(request!.body)).toEqual(callPayload(agentId));
    expect(Object.keys(JSON.parse(request!.body))).toEqual(['event', 'call']);
    expect(Object.keys(JSON.parse(request!.body).call).slice(0, 3)).toEqual(['id', 'call_id', 'customer_name']);
    expect(JSON.parse(JSON.parse(request!.body).call.transcript)).toEqual([
      { role: 'agent', text: 'Guten Tag' },
      { role: 'user', text: 'Hallo' },
    ]);

    const secret = await secretOf(w.orgId, w.token);
    expect(verifyWebhook(secret, request!.headers, request!.body)).toBe(true);
    expect(verifyWebhook(secret, request!.headers, request!.body.replace('95', '96'))).toBe(false);
  });

  it('records the successful attempt in the delivery log', async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    const eventId = await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();

    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({
      agent_id: agentId,
      event_id: eventId,
      event_type: 'call.completed',
      webhook_id: eventId,
      target_kind: 'agent',
      target_url: url,
      status: 'succeeded',
      http_status: 200,
      error: null,
      attempt_count: 1,
      attempted_at: ctx.clock.now().toISOString(),
    });
    expect(delivery!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(delivery!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, trigger: 'event', status: 'succeeded', http_status: 200 }),
    ]);
  });

  it('creates no delivery when the agent has no post_call_webhook_url, and marks the event dispatched', async () => {
    const agentId = await agentWithWebhook(null);
    const eventId = await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    expect(await deliveriesOf(agentId)).toEqual([]);
    const event = await ctx.db('events').where({ id: eventId }).first();
    expect(event.dispatched_at).not.toBeNull();
  });

  it('records a 500 as a failed attempt and does not retry it', async () => {
    const url = receiver.url('fail');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    await ctx.internals.webhookWorker.drain();

    expect(receiver.requestsTo(url)).toHaveLength(1);
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', http_status: 500, error: 'HTTP 500', attempt_count: 1 });
    const jobs = await ctx
      .db('pgboss.job')
      .where({ name: WEBHOOK_SEND_QUEUE })
      .whereRaw(`data->>'deliveryId' = ?`, [delivery!.id]);
    expect(jobs.map((j: { state: string }) => j.state)).toEqual(['completed']);
  });

  it('cuts a receiver that never answers at the timeout and records it', async () => {
    const url = receiver.url('hang');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();

    expect(receiver.requestsTo(url)).toHaveLength(1);
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', http_status: null, error: `Timed out after ${TIMEOUT_MS} ms` });
    expect(delivery!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(delivery!.duration_ms).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('does not follow a redirect and records the 3xx as a failure', async () => {
    const url = receiver.url('redirect');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();

    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path.startsWith('/ok/after-redirect'))).toEqual([]);
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', http_status: 302 });
    expect(delivery!.error).toMatch(/^Redirect not followed \(HTTP 302 to \/ok\/after-redirect-/);
  });

  it('records a refused connection as a failed attempt without an HTTP status', async () => {
    const closed = await startReceiver();
    const url = closed.url('ok');
    await closed.close();
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'failed', http_status: null });
    expect(delivery!.error).toContain('ECONNREFUSED');
  });
});

describe('employee.forwarding_created delivery', () => {
  it('goes once to each distinct webhook URL set by a member of the organization, and shows in the agent log', async () => {
    const org = await ctx.build.organization();
    const owner = await ctx.build.user(org.id, 'developer_admin');
    const agent = await ctx.build.agent(org.id);
    const urlA = receiver.url('ok');
    const urlB = receiver.url('ok');
    const members = [
      [await ctx.build.user(org.id, 'member'), urlA],
      [await ctx.build.user(org.id, 'admin'), urlB],
      [await ctx.build.user(org.id, 'member'), urlA],
      [owner, null],
    ] as const;
    for (const [user, url] of members) await ctx.db('users').where({ id: user.id }).update({ webhook_url: url });
    const outsider = await ctx.build.user((await ctx.build.organization()).id, 'member');
    const outsiderUrl = receiver.url('ok');
    await ctx.db('users').where({ id: outsider.id }).update({ webhook_url: outsiderUrl });

    const payload = {
      event: 'employee.forwarding_created',
      employee: { name: 'Max Muster', phone_number: '+4930111111', email: 'max@example.com' },
      agents: ['Main Agent'],
      substitute: 'Erika',
      responsibilities: 'Support',
      start_date: '2026-12-01',
      reasons: ['urlaub'],
    };
    const eventId = await record({
      organization_id: org.id,
      agent_id: agent.id,
      type: 'employee.forwarding_created',
      payload,
    });
    await ctx.internals.webhookWorker.drain();

    expect(receiver.requestsTo(urlA)).toHaveLength(1);
    expect(receiver.requestsTo(urlB)).toHaveLength(1);
    expect(receiver.requestsTo(outsiderUrl)).toEqual([]);
    const request = receiver.requestsTo(urlA)[0]!;
    expect(JSON.parse(request.body)).toEqual(payload);
    expect(request.headers['webhook-id']).toBe(eventId);
    expect(verifyWebhook(await secretOf(org.id, ctx.build.token(owner.id)), request.headers, request.body)).toBe(true);

    const key = await ctx.build.apiKey(org.id, owner.id);
    const res = await ctx.http.get(`/v1/agents/${agent.id}/webhook-deliveries`).set('X-API-Key', key.key).expect(200);
    expectSchema(res, paginated(WebhookDeliverySchema));
    expect(res.body.data.map((d: { target_url: string }) => d.target_url).sort()).toEqual([urlA, urlB].sort());
    expect(
      res.body.data.every(
        (d: { target_kind: string; status: string }) => d.target_kind === 'member' && d.status === 'succeeded',
      ),
    ).toBe(true);
  });
});

describe('signing secret rotation', () => {
  it('signs with the new and the old secret for 24 hours after a rotation, then with the new one only', async () => {
    const world = await ctx.build.world();
    const auth = `Bearer ${world.token}`;
    const oldSecret = await secretOf(world.orgId, world.token);
    const rotated = await ctx.http
      .post(`/v1/organization/${world.orgId}/webhook-secret/rotate`)
      .set('Authorization', auth)
      .expect(200);
    expectSchema(rotated, WebhookSecretSchema);
    const newSecret = rotated.body.secret as string;

    const url = receiver.url('ok');
    const agent = await ctx.build.agent(world.orgId, { post_call_webhook_url: url });
    const event = {
      organization_id: world.orgId,
      agent_id: agent.id,
      type: 'call.completed' as const,
      payload: callPayload(agent.id),
    };
    await record(event);
    await ctx.internals.webhookWorker.drain();
    const during = receiver.requestsTo(url)[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(newSecret, during.headers, during.body)).toBe(true);
    expect(verifyWebhook(oldSecret, during.headers, during.body)).toBe(true);

    const start = ctx.clock.now();
    try {
      ctx.clock.advance(24 * 60 * 60 * 1000 + 1000);
      await record(event);
      await ctx.internals.webhookWorker.drain();
      const after = receiver.requestsTo(url)[1]!;
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      // The signature is checked on its own here: the README receiver also checks the (moved) clock.
      const signed = `${after.headers['webhook-id']}.${after.headers['webhook-timestamp']}.${after.body}`;
      const sig = (secret: string) =>
        createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
          .update(signed)
          .digest('base64');
      expect(after.headers['webhook-signature']).toBe(`v1,${sig(newSecret)}`);
      expect(after.headers['webhook-signature']).not.toContain(sig(oldSecret));
    } finally {
      ctx.clock.set(start);
    }
  });
});

describe('redelivery', () => {
  it('sends again with the same webhook-id and records a second attempt', async () => {
    const url = receiver.url('flaky');
    const agentId = await agentWithWebhook(url);
    const eventId = await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    const [failed] = await deliveriesOf(agentId);
    expect(failed).toMatchObject({ status: 'failed', http_status: 500 });

    const res = await ctx.http
      .post(`/v1/agents/${agentId}/webhook-deliveries/${failed!.id}/redeliver`)
      .set('X-API-Key', w.key)
      .expect(202);
    expectSchema(res, WebhookDeliverySchema);
    expect(res.body).toMatchObject({ id: failed!.id, status: 'pending', attempt_count: 1 });
    await ctx.internals.webhookWorker.drain();

    const requests = receiver.requestsTo(url);
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    const [delivery] = await deliveriesOf(agentId);
    expect(delivery).toMatchObject({ status: 'succeeded', http_status: 200, attempt_count: 2 });
    expect(
      delivery!.attempts.map((a: { attempt: number; trigger: string; status: string }) => [
        a.attempt,
        a.trigger,
        a.status,
      ]),
    ).toEqual([
      [1, 'event', 'failed'],
      [2, 'redelivery', 'succeeded'],
    ]);
  });

  it('answers at once when the receiver hangs: the attempt runs in the background', async () => {
    const url = receiver.url('hang');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    await ctx.internals.webhookWorker.drain();
    const [delivery] = await deliveriesOf(agentId);

    const res = await ctx.http
      .post(`/v1/agents/${agentId}/webhook-deliveries/${delivery!.id}/redeliver`)
      .set('X-API-Key', w.key)
      .expect(202);
    // Answered before any attempt was made: nothing sent, nothing recorded yet.
    expect(res.body).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(await ctx.db('webhook_delivery_attempts').where({ delivery_id: delivery!.id })).toHaveLength(1);
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(2);
    expect((await deliveriesOf(agentId))[0]).toMatchObject({ status: 'failed', attempt_count: 2 });
  });
});

describe('background worker', () => {
  it('delivers in the background of the server process once started, without anyone draining', async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    const arrived = receiver.nextRequestTo(url);
    await ctx.container.workers.start();
    try {
      const eventId = await recordCall(agentId);
      expect((await arrived).headers['webhook-id']).toBe(eventId);
    } finally {
      await ctx.container.workers.stop();
    }
  });
});

describe('durability', () => {
  /** Another server process on the same database: its own queue connection and webhook worker. */
  async function otherInstance() {
    const queue = await JobQueue.start(ctx.config.DATABASE_URL!, ctx.logger, { background: false });
    const { webhookWorker } = buildInternals({ ...ctx, queue });
    return { queue, worker: webhookWorker };
  }

  /** What pg-boss's supervisor does once the job's expiry passed; then the retry delay is over. */
  async function expireAbandoned(jobId: string) {
    await ctx
      .db('pgboss.job')
      .where({ id: jobId })
      .update({ started_on: ctx.db.raw(`now() - interval '1 hour'`) });
    await ctx.queue.boss.expire();
    await ctx
      .db('pgboss.job')
      .where({ id: jobId })
      .update({ start_after: ctx.db.raw('now()') });
  }

  it('delivers an event recorded before a restart from the new process', async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    const restarted = await otherInstance();
    try {
      await restarted.worker.drain();
    } finally {
      await restarted.queue.stop();
    }
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect((await deliveriesOf(agentId))[0]).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('runs a dispatch job again after the worker that took it died, and delivers once', async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    const dead = await otherInstance();
    const [job] = await dead.queue.boss.fetch(EVENT_DISPATCH_QUEUE);
    await dead.queue.stop();

    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toEqual([]);

    await expireAbandoned(job!.id);
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect((await deliveriesOf(agentId))[0]).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('runs a send job again after the worker that took it died, and records one attempt', async () => {
    const url = receiver.url('ok');
    const agentId = await agentWithWebhook(url);
    await recordCall(agentId);
    // Only the dispatch step: the send job stays queued.
    await ctx.queue.runPending(EVENT_DISPATCH_QUEUE, (data: { eventId: string }) =>
      ctx.internals.webhookWorker.dispatcher.dispatch(data),
    );
    const dead = await otherInstance();
    const [job] = await dead.queue.boss.fetch(WEBHOOK_SEND_QUEUE);
    await dead.queue.stop();
    expect((await deliveriesOf(agentId))[0]).toMatchObject({ status: 'pending', attempt_count: 0 });

    await expireAbandoned(job!.id);
    await ctx.internals.webhookWorker.drain();
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect((await deliveriesOf(agentId))[0]).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('gives each event to exactly one of two workers draining at the same time', async () => {
    const urls = [receiver.url('ok'), receiver.url('ok'), receiver.url('ok'), receiver.url('ok'), receiver.url('ok')];
    for (const url of urls) await recordCall(await agentWithWebhook(url));
    const second = await otherInstance();
    try {
      await Promise.all([ctx.internals.webhookWorker.drain(), second.worker.drain()]);
    } finally {
      await second.queue.stop();
    }
    for (const url of urls) expect(receiver.requestsTo(url)).toHaveLength(1);
  });
});
