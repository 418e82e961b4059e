import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { example } from '../../clients/typescript/example.js';
import {
  createVoiceAgentClient,
  updateWithRetry,
  verifyWebhook,
  WebhookVerificationError,
} from '../../clients/typescript/index.js';
import { appendToGreeting } from '../../clients/typescript/update-example.js';
import { verifySignature } from '../../src/modules/webhooks/webhook-signature.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';

let ctx: TestContext;
let w: World;
let receiver: Receiver;
let baseUrl: string;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  receiver = await startReceiver();
  baseUrl = ctx.baseUrl;
});
afterAll(async () => {
  await receiver.close();
  await ctx.close();
});

// Never called: the compiler checks these lines (npm run typecheck) and must refuse the marked ones.
export function typeChecks() {
  const api = createVoiceAgentClient({ baseUrl: 'http://localhost:3000', apiKey: 'svc_live_x' });
  void api.GET('/v1/agents', { params: { query: { page: 2, limit: 50 } } });
  // @ts-expect-error page is an integer, not a string
  void api.GET('/v1/agents', { params: { query: { page: '2' } } });
  // @ts-expect-error no such path
  void api.GET('/v1/agentz');
  // @ts-expect-error the calls list declares phone_number, not phone (the server answers 400 too)
  void api.GET('/v1/agents/{agentId}/calls', { params: { path: { agentId: 'x' }, query: { phone: '+4930123' } } });
  // @ts-expect-error an employee needs a name
  void api.POST('/v1/agents/{agentId}/employees', { params: { path: { agentId: 'x' } }, body: {} });
}

describe('the TypeScript client', () => {
  it('runs the README example against a live server', async () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    const source = readFileSync(new URL('../../clients/typescript/example.ts', import.meta.url), 'utf8');
    expect(readme).toContain(source.replace("from './index.js'", "from './clients/typescript/index.js'").trim());

    const result = await example(baseUrl, w.key);
    expect(result).toMatchObject({
      agents: 1,
      greeting: 'Guten Tag, Praxis Sonnenschein. Wie kann ich helfen?',
      employee: { status: 'anwesend', phone_number: '+49301234567' },
    });
    expect(Number(result.remaining)).toBeGreaterThan(0);
    const agent = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    expect(agent.body.greeting).toBe('Guten Tag, Praxis Sonnenschein. Wie kann ich helfen?');
  });

  it('runs the README read-modify-write example (updateWithRetry)', async () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    const source = readFileSync(new URL('../../clients/typescript/update-example.ts', import.meta.url), 'utf8');
    expect(readme).toContain(source.replace("from './index.js'", "from './clients/typescript/index.js'").trim());
    const agentId = await ctx.build.freshAgent(w.orgId);
    await ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', w.key).send({ greeting: 'Hallo.' }).expect(200);
    const updated = await appendToGreeting(baseUrl, w.key, agentId, 'Wie kann ich helfen?');
    expect(updated?.greeting).toBe('Hallo. Wie kann ich helfen?');
  });

  it('updateWithRetry reads again and retries once when someone else wrote in between', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    let patches = 0;
    const api = createVoiceAgentClient({
      baseUrl,
      apiKey: w.key,
      // Another editor changes the agent just before this client's first PATCH arrives.
      fetch: async (input, init) => {
        const request = new Request(input, init);
        if (request.method === 'PATCH' && patches++ === 0) {
          await ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', w.key).send({ name: 'Renamed' }).expect(200);
        }
        return fetch(request);
      },
    });
    const path = { agentId };
    const result = await updateWithRetry(
      () => api.GET('/v1/agents/{agentId}', { params: { path } }),
      (agent, etag) =>
        api.PATCH('/v1/agents/{agentId}', {
          params: { path, header: { 'If-Match': etag } },
          body: { greeting: `${agent.name}: hello` },
        }),
    );
    expect(patches).toBe(2);
    expect(result.response.status).toBe(200);
    expect(result.data).toMatchObject({ name: 'Renamed', greeting: 'Renamed: hello' });
  });

  it('returns the error envelope typed, not thrown', async () => {
    const api = createVoiceAgentClient({ baseUrl, apiKey: w.key });
    const { data, error, response } = await api.GET('/v1/agents/{agentId}', {
      params: { path: { agentId: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe('NOT_FOUND');
  });
});

describe('verifyWebhook()', () => {
  const secretOf = async () =>
    (
      await ctx.http
        .get(`/v1/organization/${w.orgId}/webhook-secret`)
        .set('Authorization', `Bearer ${w.token}`)
        .expect(200)
    ).body.secret as string;

  async function deliverOne() {
    const url = receiver.url('ok');
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
    await ctx.db.transaction((trx) =>
      ctx.internals.events.record(trx, {
        organization_id: w.orgId,
        agent_id: agent.id,
        type: 'call.completed',
        payload: { event: 'call.completed', call: { id: agent.id, call_id: 'tel-1', agent_id: agent.id } },
      }),
    );
    const received = receiver.nextRequestTo(url);
    await ctx.internals.webhookWorker.drain();
    await ctx.internals.webhookWorker.drain();
    return received;
  }

  it("verifies this server's deliveries, with the current and, after a rotation, either secret", async () => {
    ctx.clock.set(new Date());
    const first = await secretOf();
    const before = await deliverOne();
    expect(verifyWebhook(first, before.headers, before.body)).toMatchObject({ event: 'call.completed' });

    await ctx.http
      .post(`/v1/organization/${w.orgId}/webhook-secret/rotate`)
      .set('Authorization', `Bearer ${w.token}`)
      .expect(200);
    const second = await secretOf();
    expect(second).not.toBe(first);
    const during = await deliverOne();
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(first, during.headers, during.body)).toMatchObject({ event: 'call.completed' });
    expect(verifyWebhook(second, during.headers, during.body)).toMatchObject({ event: 'call.completed' });
    expect(
      verifyWebhook(['whsec_' + Buffer.alloc(32).toString('base64'), second], during.headers, during.body),
    ).toBeTruthy();
  });

  it('refuses a changed body, another secret and a stale timestamp', async () => {
    ctx.clock.set(new Date());
    const secret = await secretOf();
    const delivery = await deliverOne();
    expect(() => verifyWebhook(secret, delivery.headers, delivery.body.replace('tel-1', 'tel-2'))).toThrow(
      WebhookVerificationError,
    );
    const other = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(() => verifyWebhook(other, delivery.headers, delivery.body)).toThrow(WebhookVerificationError);

    ctx.clock.set(new Date(Date.now() - 3_600_000));
    const stale = await deliverOne();
    expect(() => verifyWebhook(secret, stale.headers, stale.body)).toThrow(WebhookVerificationError);
    ctx.clock.set(new Date());
  });

  it("is interchangeable with the server's signer: the package's signatures pass the server-side verifier", () => {
    const secret = 'whsec_' + Buffer.alloc(32, 42).toString('base64');
    const at = new Date('2026-11-23T10:00:00Z');
    const body = JSON.stringify({ event: 'call.completed', call: { id: 'x' } });
    const signature = new Webhook(secret).sign('evt_1', at, body);
    expect(verifySignature(secret, { id: 'evt_1', timestamp: String(at.getTime() / 1000), signature }, body, at)).toBe(
      true,
    );
    expect(verifySignature(secret, { id: 'evt_2', timestamp: String(at.getTime() / 1000), signature }, body, at)).toBe(
      false,
    );
  });
});
