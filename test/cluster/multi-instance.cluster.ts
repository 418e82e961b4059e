/**
 * Three server processes (`node --import tsx src/main.ts`) on one PostgreSQL database and one Redis,
 * with every worker enabled, driven round-robin from here. Run with `npm run test:cluster`.
 *
 * What it shows: rate limits hold across instances (Redis), a key revoked or narrowed through one
 * instance is refused by the others for every request sent after the change answered, and jobs
 * (webhook deliveries, knowledge-base documents) run once each even when an instance is SIGKILLed,
 * and of concurrent writes carrying the same If-Match exactly one passes.
 * Measurements are printed as `cluster:` lines (docs/scaling.md quotes them).
 */
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/auth/permissions.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { killInstance, startInstance, stopInstance, type Instance } from './support/instances.js';

const REVOCATION_TRIALS = Number(process.env.CLUSTER_REVOCATION_TRIALS ?? 100);
const SCOPE_TRIALS = Number(process.env.CLUSTER_SCOPE_TRIALS ?? 30);
const EVENTS = Number(process.env.CLUSTER_EVENTS ?? 500);
const DOCUMENTS = Number(process.env.CLUSTER_DOCUMENTS ?? 100);
const LEASE_MS = 1000;
const JOBS_DEADLINE_MS = Number(process.env.CLUSTER_JOBS_DEADLINE_MS ?? 150_000);

async function redisReachable(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  const client = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    await client.destroy();
  }
}

const redisUrl = process.env.REDIS_URL || undefined;
const withRedis = await redisReachable(redisUrl);
if (!withRedis) {
  process.stdout.write(
    'cluster: no reachable REDIS_URL: the rate-limit part is skipped (without Redis each instance counts its own requests)\n',
  );
}

let ctx: TestContext;
let instances: Instance[] = [];
let receiver: Receiver;
let orgId: string;
let userId: string;
let token: string;
let agentId: string;
let otherAgentId: string;

function report(line: string): void {
  process.stdout.write(`cluster: ${line}\n`);
}

beforeAll(async () => {
  ctx = await createTestContext();
  receiver = await startReceiver();
  const env = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: ctx.config.DATABASE_URL!,
    REDIS_URL: withRedis ? redisUrl! : '',
    JWT_SECRET: ctx.config.JWT_SECRET!,
    WORKERS_ENABLED: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    CACHE_LEASE_MS: String(LEASE_MS),
    JOB_EXPIRE_SECONDS: '3',
  };
  instances = await Promise.all(['A', 'B', 'C'].map((name) => startInstance(name, env)));
  const org = await ctx.build.organization();
  const user = await ctx.build.user(org.id, 'developer_admin');
  orgId = org.id;
  userId = user.id;
  token = ctx.build.token(user.id);
  agentId = (await ctx.build.agent(orgId, { post_call_webhook_url: receiver.url('ok') })).id;
  otherAgentId = (await ctx.build.agent(orgId)).id;
}, 120_000);

afterAll(async () => {
  await Promise.all(instances.map((instance) => stopInstance(instance)));
  await receiver?.close();
  await ctx?.close();
});

type Sent = { status: number; sentAt: number; doneAt: number };

async function get(instance: Instance, path: string, key: string): Promise<Sent> {
  const sentAt = performance.now();
  const res = await fetch(`${instance.url}${path}`, { headers: { 'X-API-Key': key } });
  await res.arrayBuffer();
  return { status: res.status, sentAt, doneAt: performance.now() };
}

async function send(instance: Instance, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function newKey(
  options: {
    permissions?: readonly Permission[];
    allowedAgentIds?: string[] | null;
    perMinute?: number;
    perHour?: number;
  } = {},
) {
  return ctx.build.apiKey(orgId, userId, {
    permissions: options.permissions ?? PERMISSIONS,
    allowedAgentIds: options.allowedAgentIds ?? null,
    rateLimitPerMinute: options.perMinute ?? 100_000,
    rateLimitPerHour: options.perHour ?? 1_000_000,
  });
}

describe.skipIf(!withRedis)('rate limits across three instances (Redis)', () => {
  /** 200 requests, 20 at a time, round-robin; retried once with a new key if a window boundary fell inside. */
  async function successesOf(window: 'minute' | 'hour', limits: { perMinute: number; perHour: number }) {
    const size = window === 'minute' ? 60_000 : 3_600_000;
    for (let attempt = 0; attempt < 2; attempt++) {
      const key = await newKey(limits);
      const startedWindow = Math.floor(Date.now() / size);
      const statuses: number[] = [];
      for (let batch = 0; batch < 10; batch++) {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => get(instances[(batch * 20 + i) % 3]!, `/v1/agents/${agentId}`, key.key)),
        );
        statuses.push(...results.map((r) => r.status));
      }
      if (Math.floor(Date.now() / size) === startedWindow) return statuses;
    }
    throw new Error(`every attempt crossed a ${window} boundary`);
  }

  it('a key limited to 50 per minute gets exactly 50 of 200 requests spread over the three', async () => {
    const statuses = await successesOf('minute', { perMinute: 50, perHour: 1_000_000 });
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    report('rate limit 50/min over 3 instances: 50 of 200 succeeded, 150 got 429');
  });

  it('a key limited to 50 per hour likewise', async () => {
    const statuses = await successesOf('hour', { perMinute: 100_000, perHour: 50 });
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    report('rate limit 50/hour over 3 instances: 50 of 200 succeeded, 150 got 429');
  });
});

type Trial = { successesAfter: number; refusalDelayMs: number; writeMs: number };

/**
 * Warms `key` on the two other instances, then changes it through `writer` while both keep probing
 * `path`. Counts the probes sent after the write answered that still succeeded (must be none), and
 * how long after the answer each of the others first refused.
 */
async function trial(writer: Instance, key: string, path: string, change: () => Promise<number>): Promise<Trial> {
  const others = instances.filter((i) => i !== writer && i.child.exitCode === null);
  for (const other of others) {
    for (let i = 0; i < 2; i++) expect((await get(other, path, key)).status).toBe(200);
  }
  let answeredAt = Infinity;
  const probes = others.map(async (other) => {
    const seen: Sent[] = [];
    // Until a probe sent after the answer came back refused (bounded: a refusal must come).
    for (let i = 0; i < 10_000; i++) {
      const probe = await get(other, path, key);
      seen.push(probe);
      if (probe.sentAt > answeredAt && probe.status !== 200) break;
      // 'not this agent' (403/404) or 'no such key' (401); never an error or a limit.
      expect([200, 401, 403, 404]).toContain(probe.status);
    }
    return seen;
  });
  const started = performance.now();
  const status = await change();
  answeredAt = performance.now();
  expect(status).toBeLessThan(300);
  const seen = (await Promise.all(probes)).flat();
  const after = seen.filter((p) => p.sentAt > answeredAt);
  const firstRefusals = (await Promise.all(probes)).map((list) => list.find((p) => p.status !== 200)!.doneAt);
  return {
    successesAfter: after.filter((p) => p.status === 200).length,
    refusalDelayMs: Math.max(0, ...firstRefusals.map((t) => t - answeredAt)),
    writeMs: answeredAt - started,
  };
}

function summarize(name: string, trials: Trial[]): void {
  const successes = trials.reduce((n, t) => n + t.successesAfter, 0);
  const delays = trials.map((t) => t.refusalDelayMs).sort((a, b) => a - b);
  const writes = trials.map((t) => t.writeMs).sort((a, b) => a - b);
  const p = (list: number[], q: number) => list[Math.min(list.length - 1, Math.floor(list.length * q))]!.toFixed(1);
  report(
    `${name}: ${trials.length} trials, ${successes} requests sent after the answer succeeded elsewhere; ` +
      `first refusal on the others after the answer: median ${p(delays, 0.5)} ms, max ${p(delays, 1)} ms; ` +
      `the write itself: median ${p(writes, 0.5)} ms, max ${p(writes, 1)} ms`,
  );
  expect(successes).toBe(0);
}

describe('a change through one instance is refused by the others', () => {
  it(`deleted or deactivated keys (${REVOCATION_TRIALS} trials)`, async () => {
    const trials: Trial[] = [];
    for (let i = 0; i < REVOCATION_TRIALS; i++) {
      const key = await newKey();
      const writer = instances[i % 3]!;
      const deleting = i % 2 === 0;
      trials.push(
        await trial(writer, key.key, `/v1/agents/${agentId}`, async () =>
          deleting
            ? (await send(writer, 'DELETE', `/v1/api-keys/${key.id}`)).status
            : (await send(writer, 'PATCH', `/v1/api-keys/${key.id}`, { is_active: false })).status,
        ),
      );
    }
    summarize('key delete/deactivate', trials);
  }, 120_000);

  it(`agent scope and permission changes (${SCOPE_TRIALS} trials each)`, async () => {
    const scope: Trial[] = [];
    const permission: Trial[] = [];
    for (let i = 0; i < SCOPE_TRIALS; i++) {
      const writer = instances[i % 3]!;
      const scoped = await newKey({ allowedAgentIds: [agentId, otherAgentId] });
      scope.push(
        await trial(
          writer,
          scoped.key,
          `/v1/agents/${agentId}`,
          async () =>
            (await send(writer, 'PATCH', `/v1/api-keys/${scoped.id}`, { allowed_agent_ids: [otherAgentId] })).status,
        ),
      );
      const full = await newKey();
      permission.push(
        await trial(
          writer,
          full.key,
          `/v1/agents/${agentId}`,
          async () =>
            (
              await send(writer, 'PATCH', `/v1/api-keys/${full.id}`, {
                permissions: PERMISSIONS.filter((p) => p !== 'agents:read'),
              })
            ).status,
        ),
      );
    }
    summarize('agent scope narrowed', scope);
    summarize('permission removed', permission);
  }, 120_000);
});

describe('Idempotency-Key across instances', () => {
  it('20 concurrent identical POSTs with one key, spread over the three, create one contact', async () => {
    const key = await newKey();
    const idempotencyKey = crypto.randomUUID();
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${instances[i % 3]!.url}/v1/agents/${agentId}/contacts`, {
          method: 'POST',
          headers: { 'X-API-Key': key.key, 'content-type': 'application/json', 'Idempotency-Key': idempotencyKey },
          body: JSON.stringify({ customer_name: 'Cluster Idempotent' }),
        });
        await res.arrayBuffer();
        return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true' };
      }),
    );
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(results.filter((r) => r.status === 201 && !r.replayed)).toHaveLength(1);
    const count = await ctx.db('contacts').where({ customer_name: 'Cluster Idempotent' }).count({ n: '*' }).first();
    expect(count).toEqual({ n: 1 });
    report(
      `Idempotency-Key: 20 concurrent identical POSTs over 3 instances: 1 executed, ` +
        `${results.filter((r) => r.replayed).length} replayed, ${results.filter((r) => r.status === 409).length} got 409`,
    );
  });
});

describe('If-Match across instances', () => {
  it('20 concurrent PATCHes carrying the same ETag, spread over the three: exactly one succeeds', async () => {
    const key = await newKey();
    const target = (await ctx.build.agent(orgId, { name: 'Cluster If-Match' })).id;
    const read = await fetch(`${instances[0]!.url}/v1/agents/${target}`, { headers: { 'X-API-Key': key.key } });
    await read.arrayBuffer();
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${instances[i % 3]!.url}/v1/agents/${target}`, {
          method: 'PATCH',
          headers: { 'X-API-Key': key.key, 'content-type': 'application/json', 'If-Match': etag },
          body: JSON.stringify({ name: `Cluster writer ${i}` }),
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
    const versions = await ctx
      .db('agent_versions')
      .where({ agent_id: target, change: 'agent.updated' })
      .count({ n: '*' });
    expect(versions).toEqual([{ n: 1 }]);
    report('If-Match: 20 concurrent PATCHes with one ETag over 3 instances: 1 written, 19 got 412');
  });
});

describe('jobs run once across three instances, also when one is killed', () => {
  it(`${EVENTS} webhook events and ${DOCUMENTS} knowledge-base documents`, async () => {
    const key = await newKey();
    const webhookUrl = (await ctx.db('agents').where({ id: agentId }).first('post_call_webhook_url'))
      .post_call_webhook_url as string;
    const victim = instances[2]!;
    const started = performance.now();
    const created = { calls: 0, documents: 0 };
    const total = EVENTS + DOCUMENTS;
    // Interleaved, round-robin over the instances that are alive; C is killed half-way.
    for (let n = 0; n < total; n += 10) {
      if (n >= total / 2 && victim.child.exitCode === null && victim.child.signalCode === null) {
        await killInstance(victim);
        report(`instance C killed with SIGKILL after ${created.calls} calls and ${created.documents} documents`);
      }
      const alive = instances.filter((i) => i.child.exitCode === null && i.child.signalCode === null);
      await Promise.all(
        Array.from({ length: Math.min(10, total - n) }, async (_, j) => {
          const target = alive[(n + j) % alive.length]!;
          const isCall = (n + j) % (total / DOCUMENTS) !== 0 || created.documents >= DOCUMENTS;
          const path = isCall ? `/v1/agents/${agentId}/calls` : `/v1/agents/${agentId}/knowledge-base`;
          const body = isCall
            ? {
                call_id: `cluster-${n + j}`,
                phone_number: '+49301234567',
                duration: 30,
                general_success: true,
                transcript: [{ role: 'user', text: 'Hallo' }],
              }
            : { title: `Doc ${n + j}`, content: `Document ${n + j}. ${'Some text to index. '.repeat(20)}` };
          if (isCall) created.calls += 1;
          else created.documents += 1;
          const res = await fetch(`${target.url}${path}`, {
            method: 'POST',
            headers: { 'X-API-Key': key.key, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(res.status).toBe(201);
          await res.arrayBuffer();
        }),
      );
    }
    expect(created).toEqual({ calls: EVENTS, documents: DOCUMENTS });

    // Done when every delivery succeeded and every document is ready (bounded by the test timeout).
    const path = new URL(webhookUrl).pathname;
    const deadline = Date.now() + JOBS_DEADLINE_MS;
    for (;;) {
      const unique = new Set(receiver.requestsTo(webhookUrl).map((r) => r.headers['webhook-id'])).size;
      const ready = await ctx
        .db('kb_documents')
        .where({ agent_id: agentId, status: 'ready' })
        .count({ n: '*' })
        .first();
      if (unique >= EVENTS && Number(ready!.n) >= DOCUMENTS) break;
      if (Date.now() > deadline) {
        const jobs = await ctx.db
          .withSchema('pgboss')
          .from('job')
          .groupBy('name', 'state')
          .select('name', 'state')
          .count({ n: '*' });
        throw new Error(
          `not done in time: ${unique} deliveries received, ${ready!.n} documents ready; jobs: ${JSON.stringify(jobs)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const seconds = (performance.now() - started) / 1000;

    const requests = receiver.received.filter((r) => r.path === path);
    const ids = requests.map((r) => String(r.headers['webhook-id']));
    const unique = new Set(ids);
    // Documents record kb.document.ready too, which no URL here subscribes to: only the calls' events are sent.
    const events = await ctx.db('events').where({ agent_id: agentId, type: 'call.completed' }).select('id');
    expect(unique.size).toBe(EVENTS);
    expect([...unique].sort()).toEqual(events.map((e) => e.id).sort());
    const deliveries = await ctx
      .db('webhook_deliveries')
      .where({ agent_id: agentId })
      .select('event_id', 'status', 'attempt_count');
    expect(deliveries).toHaveLength(EVENTS);
    expect(new Set(deliveries.map((d) => d.event_id)).size).toBe(EVENTS);

    const documents = await ctx.db('kb_documents').where({ agent_id: agentId }).select('id', 'status', 'chunk_count');
    expect(documents).toHaveLength(DOCUMENTS);
    for (const document of documents) expect(document).toMatchObject({ status: 'ready', chunk_count: 1 });
    const chunks = await ctx
      .db('kb_chunks')
      .whereIn(
        'document_id',
        documents.map((d) => d.id),
      )
      .count({ n: '*' })
      .first();
    expect(Number(chunks!.n)).toBe(DOCUMENTS);

    const retried = await ctx.db
      .withSchema('pgboss')
      .from('job')
      .where('retry_count', '>', 0)
      .groupBy('name')
      .select('name')
      .count({ n: '*' });
    const duplicates = ids.length - unique.size;
    report(
      `${EVENTS} webhook events and ${DOCUMENTS} documents over 3 instances (C killed half-way): ` +
        `${unique.size} distinct deliveries received, ${duplicates} repeated deliveries of the same webhook-id, ` +
        `${documents.length} documents ready with ${chunks!.n} chunks, jobs retried after expiry: ` +
        `${JSON.stringify(Object.fromEntries(retried.map((r) => [r.name, Number(r.n)])))}, all done in ${seconds.toFixed(1)} s`,
    );
    // A send interrupted by the kill after the receiver answered is sent again with the same webhook-id
    // (at-least-once; receivers deduplicate by it). Nothing else may repeat.
    const retriedSends = Number(retried.find((r) => r.name === 'webhooks.send')?.n ?? 0);
    expect(duplicates).toBeLessThanOrEqual(retriedSends);
  }, 300_000);
});
