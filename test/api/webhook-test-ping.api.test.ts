import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { repoRoot } from '../support/server-process.js';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/webhook-receiver.js';
import { WebhookTestResultSchema } from '../../src/modules/webhooks/webhook-test.schemas.js';
import { WebhookTestPayloadSchema } from '../../src/modules/webhooks/webhook-payload.js';

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

async function secretOf(orgId: string, token: string): Promise<string> {
  const res = await ctx.http
    .get(`/v1/organization/${orgId}/webhook-secret`)
    .set('Authorization', `Bearer ${token}`)
    .expect(200);
  return res.body.secret;
}

/** Verifies with the Standard Webhooks reference library, as a receiver would; returns the payload. */
function verified(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

async function deliveryCount(orgId: string): Promise<number> {
  const row = await ctx.db('webhook_deliveries').where({ organization_id: orgId }).count('* as n').first();
  return Number(row?.n);
}

async function pingCount(outcome: string): Promise<number> {
  const text = (await ctx.http.get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`webhook_test_pings_total{outcome="${outcome}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

const pingAgent = (agentId: string, key = w.key) =>
  ctx.http.post(`/v1/agents/${agentId}/webhook/test`).set('X-API-Key', key);
const pingMe = (token = w.token) => ctx.http.post('/v1/me/webhook/test').set('Authorization', `Bearer ${token}`);

describe('POST /v1/agents/{agentId}/webhook/test', () => {
  it('sends a signed webhook.test event that verifies, answers the outcome, stores no delivery and counts it', async () => {
    const url = receiver.url('ok');
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
    const before = await pingCount('succeeded');

    const res = await pingAgent(agent.id).expect(200);
    expectSchema(res, WebhookTestResultSchema);
    expect(res.body).toMatchObject({ delivered: true, status_code: 200, error: null, target_url: url });
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);

    const requests = receiver.requestsTo(url);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.headers['webhook-id']).toBe(res.body.webhook_id);
    expect(request!.headers['content-type']).toBe('application/json');
    const payload = verified(await secretOf(w.orgId, w.token), request!);
    expect(WebhookTestPayloadSchema.parse(payload)).toMatchObject({
      event: 'webhook.test',
      test: true,
      organization_id: w.orgId,
      agent_id: agent.id,
    });
    expect(Object.keys(JSON.parse(request!.body))[0]).toBe('event');

    const log = await ctx.http.get(`/v1/agents/${agent.id}/webhook-deliveries`).set('X-API-Key', w.key).expect(200);
    expect(log.body.data).toEqual([]);
    expect(await deliveryCount(w.orgId)).toBe(0);
    expect(await pingCount('succeeded')).toBe(before + 1);
  });

  it('answers delivered false with the HTTP status when the receiver fails', async () => {
    const url = receiver.url('fail');
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
    const before = await pingCount('http_error');
    const res = await pingAgent(agent.id).expect(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: 500, error: 'HTTP 500' });
    expect(await pingCount('http_error')).toBe(before + 1);
  });

  it('answers a hanging receiver at the timeout, naming it', async () => {
    const url = receiver.url('hang');
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
    const before = await pingCount('timeout');
    const started = Date.now();
    const res = await pingAgent(agent.id).expect(200);
    const took = Date.now() - started;
    expect(res.body).toMatchObject({ delivered: false, status_code: null, error: `Timed out after ${TIMEOUT_MS} ms` });
    expect(res.body.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(took).toBeLessThan(TIMEOUT_MS + 2000);
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(await pingCount('timeout')).toBe(before + 1);
  });

  it("answers delivered false with the guard's reason for a URL the guard refuses, and sends nothing", async () => {
    // Written directly: the save-time check refuses credentials in a URL; the guard refuses it again.
    const url = receiver.url('ok').replace('http://', 'http://user:secret@');
    const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
    const before = await pingCount('refused');
    const res = await pingAgent(agent.id).expect(200);
    expect(res.body).toMatchObject({
      delivered: false,
      status_code: null,
      error: 'Refused: Credentials in the URL are not allowed',
    });
    expect(receiver.requestsTo(url)).toHaveLength(0);
    expect(await pingCount('refused')).toBe(before + 1);
  });

  it('answers 409 CONFLICT naming post_call_webhook_url when the agent has none', async () => {
    const agent = await ctx.build.agent(w.orgId, {});
    const res = await pingAgent(agent.id).expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect(res.body.error.details).toEqual([{ field: 'post_call_webhook_url', message: 'Not set' }]);
  });

  describe('access', () => {
    it('needs agents:write (403), checked before anything is sent', async () => {
      const url = receiver.url('ok');
      const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
      const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
      const res = await pingAgent(agent.id, readOnly.key).expect(403);
      expect(res.body.error).toMatchObject({
        code: 'FORBIDDEN',
        message: 'API key lacks required permission: agents:write',
      });
      expect(receiver.requestsTo(url)).toHaveLength(0);
    });

    it("refuses an agent outside the key's agent scope (403 AGENT_NOT_ACCESSIBLE)", async () => {
      const url = receiver.url('ok');
      const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
      const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
      const res = await pingAgent(agent.id, scoped.key).expect(403);
      expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
      expect(receiver.requestsTo(url)).toHaveLength(0);
    });

    it('answers 404 for an agent of another organization and 400 for a malformed id', async () => {
      const other = await ctx.build.world();
      const url = receiver.url('ok');
      const agent = await ctx.build.agent(other.orgId, { post_call_webhook_url: url });
      await pingAgent(agent.id).expect(404);
      await pingAgent('not-a-uuid').expect(400);
      expect(receiver.requestsTo(url)).toHaveLength(0);
    });

    it('refuses a member (read-only role) with a dashboard token', async () => {
      const url = receiver.url('ok');
      const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
      const member = await ctx.build.user(w.orgId, 'member');
      await ctx.syncCaches();
      await ctx.http
        .post(`/v1/agents/${agent.id}/webhook/test`)
        .set('Authorization', `Bearer ${ctx.build.token(member.id)}`)
        .expect(403);
      expect(receiver.requestsTo(url)).toHaveLength(0);
    });

    it("costs one request of the key's rate limit", async () => {
      const url = receiver.url('ok');
      const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
      const limited = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 2, rateLimitPerHour: 100 });
      const first = await pingAgent(agent.id, limited.key).expect(200);
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      await pingAgent(agent.id, limited.key).expect(200);
      await pingAgent(agent.id, limited.key).expect(429);
      expect(receiver.requestsTo(url)).toHaveLength(2);
    });
  });
});

describe('POST /v1/me/webhook/test', () => {
  it('sends a signed webhook.test event to your webhook_url, signed with your organization secret', async () => {
    const url = receiver.url('ok');
    await ctx.http.patch('/v1/me').set('Authorization', `Bearer ${w.token}`).send({ webhook_url: url }).expect(200);
    const before = await pingCount('succeeded');

    const res = await pingMe().expect(200);
    expectSchema(res, WebhookTestResultSchema);
    expect(res.body).toMatchObject({ delivered: true, status_code: 200, error: null, target_url: url });
    const [request] = receiver.requestsTo(url);
    expect(verified(await secretOf(w.orgId, w.token), request!)).toMatchObject({
      event: 'webhook.test',
      test: true,
      organization_id: w.orgId,
      agent_id: null,
    });
    expect(await pingCount('succeeded')).toBe(before + 1);
    expect(await deliveryCount(w.orgId)).toBe(0);
  });

  it('answers 409 naming webhook_url when none is set, and 401 for an API key', async () => {
    const user = await ctx.build.user(w.orgId, 'member');
    await ctx.syncCaches();
    const res = await pingMe(ctx.build.token(user.id)).expect(409);
    expect(res.body.error.details).toEqual([{ field: 'webhook_url', message: 'Not set' }]);
    await ctx.http.post('/v1/me/webhook/test').set('X-API-Key', w.key).expect(401);
  });

  it('needs organization_id for a user of several organizations, and uses that organization secret', async () => {
    const other = await ctx.build.world();
    const user = await ctx.build.user(w.orgId, 'member');
    await ctx.build.member(user.id, other.orgId, 'developer_admin');
    const token = ctx.build.token(user.id);
    const url = receiver.url('ok');
    await ctx.http.patch('/v1/me').set('Authorization', `Bearer ${token}`).send({ webhook_url: url }).expect(200);

    const missing = await pingMe(token).expect(400);
    expect(missing.body.error.details).toEqual([
      { field: 'organization_id', message: expect.stringMatching(/several organizations/) },
    ]);
    const malformed = await pingMe(token).send({ organization_id: 'nope' }).expect(400);
    expect(malformed.body.error.details[0].field).toBe('organization_id');
    const stranger = await ctx.build.organization();
    await pingMe(token).send({ organization_id: stranger.id }).expect(404);
    expect(receiver.requestsTo(url)).toHaveLength(0);

    await pingMe(token).send({ organization_id: other.orgId }).expect(200);
    const [request] = receiver.requestsTo(url);
    expect(verified(await secretOf(other.orgId, other.token), request!)).toMatchObject({
      organization_id: other.orgId,
    });
    const firstSecret = await secretOf(w.orgId, w.token);
    expect(() => verified(firstSecret, request!)).toThrow();
  });
});

describe('docs/webhooks.md', () => {
  it("runs the test-ping example's commands as written, in order: each answers 2xx and each ping is delivered", async () => {
    const doc = readFileSync(path.join(repoRoot, 'docs/webhooks.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Test pings'));
    const block = /```bash\n([\s\S]*?)\n```/.exec(section)![1]!;
    const world = await ctx.build.world();
    const commands = block
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.startsWith('curl '));
    expect(commands.length).toBeGreaterThanOrEqual(2);
    const pings: unknown[] = [];
    for (const command of commands) {
      const [, method, target] = /-X (\w+) "\$BASE([^"]+)"/.exec(command)!;
      const body = /-d '([^']*)'/.exec(command)?.[1];
      let req = ctx.http[method!.toLowerCase() as 'post' | 'patch'](target!.replace('$AGENT', world.agentId));
      if (command.includes('X-API-Key: $KEY')) req = req.set('X-API-Key', world.key);
      if (command.includes('Bearer $TOKEN')) req = req.set('Authorization', `Bearer ${world.token}`);
      if (body !== undefined) {
        const json = body.replace(/https:\/\/hooks\.example\.com\/\w+/g, receiver.url('ok'));
        req = req.set('Content-Type', 'application/json').send(json);
      }
      const res = await req;
      expect(res.status, `${command}\n${JSON.stringify(res.body)}`).toBeLessThan(300);
      if (target!.endsWith('/webhook/test')) pings.push(res.body);
    }
    expect(pings).toEqual([expect.objectContaining({ delivered: true }), expect.objectContaining({ delivered: true })]);
  });
});
