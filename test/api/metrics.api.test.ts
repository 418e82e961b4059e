import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** The value of one sample, e.g. `metric{a="b"}`; undefined when absent. */
async function sample(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = (await ctx.http.get('/metrics').expect(200)).text;
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

const callPayload = (agentId: string) => ({
  event: 'call.completed',
  call: { id: '5b0f7c2e-6a43-4f4e-9d53-1f0c7a1f9a01', call_id: 'tel-1', agent_id: agentId, duration: 10 },
});

describe('GET /metrics', () => {
  it('answers in the Prometheus text format without credentials when no METRICS_TOKEN is set', async () => {
    const res = await ctx.http.get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(res.text).toContain('process_cpu_user_seconds_total');
    expect(res.text).toContain('nodejs_heap_size_used_bytes');
  });

  it('times requests by method, route pattern and status', async () => {
    const labels = { method: 'GET', route: '/v1/agents/{agentId}', status: '200' };
    const before = (await sample('http_request_duration_seconds_count', labels)) ?? 0;
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    expect(await sample('http_request_duration_seconds_count', labels)).toBe(before + 2);
    await ctx.http.post(`/v1/agents/${w.agentId}/knowledge-base/search`).set('X-API-Key', w.key).send({});
    expect(
      await sample('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/agents/{agentId}/knowledge-base/search',
      }),
    ).toBeGreaterThanOrEqual(1);
    await ctx.http.get('/no/such/thing').expect(404);
    expect(await sample('http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
  });

  it('counts rate-limit refusals by window', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1, rateLimitPerHour: 100 });
    const before = (await sample('rate_limit_refusals_total', { window: 'minute' })) ?? 0;
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(429);
    expect(await sample('rate_limit_refusals_total', { window: 'minute' })).toBe(before + 1);
  });

  it('reports queue depth and age, and counts webhook attempts by outcome', async () => {
    const ok = await ctx.build.agent(w.orgId, { post_call_webhook_url: receiver.url('ok') });
    const failing = await ctx.build.agent(w.orgId, { post_call_webhook_url: receiver.url('fail') });
    await ctx.db.transaction(async (trx) => {
      for (const agent of [ok, failing]) {
        await ctx.internals.events.record(trx, {
          organization_id: w.orgId,
          agent_id: agent.id,
          type: 'call.completed',
          payload: callPayload(agent.id),
        });
      }
    });
    expect(await sample('job_queue_depth', { queue: 'events.dispatch' })).toBe(2);
    expect(await sample('job_queue_oldest_age_seconds', { queue: 'events.dispatch' })).toBeGreaterThanOrEqual(0);
    await ctx.internals.webhookWorker.drain();
    await ctx.internals.webhookWorker.drain();
    expect(await sample('job_queue_depth', { queue: 'events.dispatch' })).toBe(0);
    expect(await sample('job_queue_depth', { queue: 'webhooks.send' })).toBe(0);
    const attempts = (outcome: string) =>
      sample('webhook_delivery_attempts_total', { event_type: 'call.completed', outcome });
    expect(await attempts('succeeded')).toBe(1);
    expect(await attempts('failed')).toBe(1);
  });

  it('reports the database pool', async () => {
    expect(await sample('db_pool_connections', { state: 'max' })).toBe(8);
    expect(await sample('db_pool_connections', { state: 'used' })).toBeGreaterThanOrEqual(0);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let guarded: TestContext;
  const token = 'metrics-token-0123456789abcdef';
  beforeAll(async () => {
    guarded = await createTestContext({ config: { METRICS_TOKEN: token } });
  });
  afterAll(() => guarded.close());

  it('refuses a scrape without the token or with another one', async () => {
    const missing = await guarded.http.get('/metrics').expect(401);
    expect(missing.body.error.code).toBe('UNAUTHORIZED');
    await guarded.http.get('/metrics').set('Authorization', 'Bearer wrong').expect(401);
    await guarded.http.get('/metrics').set('X-API-Key', token).expect(401);
  });

  it('answers with the token', async () => {
    const res = await guarded.http.get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
    expect(res.text).toContain('http_request_duration_seconds');
  });
});

describe('GET /metrics in production', () => {
  let production: TestContext;
  const token = 'metrics-token-production-0123456789';
  beforeAll(async () => {
    production = await createTestContext({ config: { NODE_ENV: 'production' } });
  });
  afterAll(() => production.close());

  it('is 401 for every scrape when no METRICS_TOKEN is set, and names the fix', async () => {
    const res = await production.http.get('/metrics').expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect(res.body.error.message).toContain('METRICS_TOKEN');
    expect(res.text).not.toContain('process_cpu_user_seconds_total');
    await production.http.get('/metrics').set('Authorization', `Bearer ${token}`).expect(401);
  });

  it('answers with the token when METRICS_TOKEN is set', async () => {
    const withToken = await createTestContext({ config: { NODE_ENV: 'production', METRICS_TOKEN: token } });
    try {
      await withToken.http.get('/metrics').expect(401);
      const res = await withToken.http.get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
      expect(res.text).toContain('process_cpu_user_seconds_total');
    } finally {
      await withToken.close();
    }
  });
});
