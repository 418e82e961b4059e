import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { ApiKeySchema, CreatedApiKeySchema } from '../../src/modules/api-keys/api-key.schemas.js';
import type { World } from '../support/builders.js';
import { checkedHttp } from '../support/contract.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';

/**
 * This file's app trusts loopback as its proxy (TRUST_PROXY=loopback): the tests connect from
 * 127.0.0.1, so the right-most X-Forwarded-For entry that is not loopback is the client.
 */
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext({ config: { TRUST_PROXY: 'loopback' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const bearer = () => ({ Authorization: `Bearer ${w.token}` });

async function createKey(fields: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await ctx.http
    .post('/v1/api-keys')
    .set(bearer())
    .send({ name: 'Egress-locked', permissions: ['agents:read'], ...fields })
    .expect(201);
  return res.body;
}

const getAgent = (key: string, forwardedFor?: string) => {
  const req = ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key);
  return forwardedFor === undefined ? req : req.set('X-Forwarded-For', forwardedFor);
};

const storedIps = async (id: string) => (await ctx.db('api_keys').where({ id }).first('allowed_ips')).allowed_ips;

describe('allowed_ips on API keys', () => {
  it('stores addresses and ranges in canonical form, shows them, and PATCH replaces or clears them', async () => {
    const created = await ctx.http
      .post('/v1/api-keys')
      .set(bearer())
      .send({
        name: 'K',
        permissions: ['agents:read'],
        allowed_ips: ['203.0.113.0/24', '2001:DB8:0:0::/32', '::ffff:198.51.100.7', '192.0.2.1/32'],
      })
      .expect(201);
    expectSchema(created, CreatedApiKeySchema);
    expect(created.body.allowed_ips).toEqual(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7', '192.0.2.1']);
    const shown = await ctx.http.get(`/v1/api-keys/${created.body.id}`).set(bearer()).expect(200);
    expectSchema(shown, ApiKeySchema);
    expect(shown.body.allowed_ips).toEqual(created.body.allowed_ips);

    const patched = await ctx.http
      .patch(`/v1/api-keys/${created.body.id}`)
      .set(bearer())
      .send({ allowed_ips: ['198.51.100.0/24'] })
      .expect(200);
    expect(patched.body.allowed_ips).toEqual(['198.51.100.0/24']);
    await ctx.http.patch(`/v1/api-keys/${created.body.id}`).set(bearer()).send({ allowed_ips: null }).expect(200);
    expect(await storedIps(created.body.id)).toBeNull();

    const plain = await ctx.http
      .post('/v1/api-keys')
      .set(bearer())
      .send({ name: 'K', permissions: ['agents:read'] })
      .expect(201);
    expect(plain.body.allowed_ips).toBeNull();
  });

  it('refuses invalid entries naming each index, an empty or too long list, and writes nothing', async () => {
    const before = await ctx.db('api_keys').count({ n: '*' }).first();
    const bad = await ctx.http
      .post('/v1/api-keys')
      .set(bearer())
      .send({
        name: 'K',
        permissions: ['agents:read'],
        allowed_ips: ['10.0.0.1', 'not-an-ip', '10.1.2.3/8', '2001:db8::/129', '10.0.0.1/32', 7],
      })
      .expect(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const fields = bad.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining(['allowed_ips[1]', 'allowed_ips[2]', 'allowed_ips[3]', 'allowed_ips[5]']),
    );
    expect(fields).not.toContain('allowed_ips[0]');
    const hostBits = bad.body.error.details.find((d: { field: string }) => d.field === 'allowed_ips[2]');
    expect(hostBits.message).toContain('10.0.0.0/8');

    const repeated = await ctx.http
      .post('/v1/api-keys')
      .set(bearer())
      .send({ name: 'K', permissions: ['agents:read'], allowed_ips: ['10.0.0.1', '10.0.0.1/32'] })
      .expect(400);
    expect(repeated.body.error.details).toEqual([{ field: 'allowed_ips[1]', message: 'Repeats allowed_ips[0]' }]);

    for (const list of [[], Array.from({ length: 51 }, (_, i) => `10.0.0.${i}`)]) {
      const res = await ctx.http
        .post('/v1/api-keys')
        .set(bearer())
        .send({ name: 'K', permissions: ['agents:read'], allowed_ips: list })
        .expect(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['allowed_ips']);
    }
    const fifty = Array.from({ length: 50 }, (_, i) => `10.0.0.${i}`);
    const atBound = await createKey({ allowed_ips: fifty });
    expect(await storedIps(atBound.id)).toHaveLength(50);
    const after = await ctx.db('api_keys').count({ n: '*' }).first();
    expect(Number(after!.n)).toBe(Number(before!.n) + 1);

    const patch = await ctx.http
      .patch(`/v1/api-keys/${atBound.id}`)
      .set(bearer())
      .send({ allowed_ips: ['192.0.2.0/24', '192.0.2.300'] })
      .expect(400);
    expect(patch.body.error.details.map((d: { field: string }) => d.field)).toEqual(['allowed_ips[1]']);
    expect(await storedIps(atBound.id)).toEqual(fifty);
  });

  it('lets in the right-most X-Forwarded-For entry that is not a trusted proxy, IPv4, IPv4-mapped or IPv6', async () => {
    const { key } = await createKey({ allowed_ips: ['203.0.113.0/24', '2001:db8::/32'] });
    await getAgent(key, '203.0.113.9').expect(200);
    await getAgent(key, '198.51.100.1, 203.0.113.9').expect(200);
    await getAgent(key, '203.0.113.9, 127.0.0.1').expect(200); // a trusted proxy's own entry is skipped
    await getAgent(key, '::ffff:203.0.113.9').expect(200);
    await getAgent(key, '2001:db8:abcd::5').expect(200);
    for (const forged of ['203.0.113.9, 198.51.100.1', '2001:db9::1', '203.0.114.1', 'garbage']) {
      const res = await getAgent(key, forged).expect(403);
      expect(res.body.error.code, forged).toBe('IP_NOT_ALLOWED');
    }
    const direct = await getAgent(key).expect(403); // no header: the socket's own 127.0.0.1
    expect(direct.body.error).toMatchObject({
      code: 'IP_NOT_ALLOWED',
      message: "This API key may not be used from 127.0.0.1: it is outside the key's allowed_ips",
    });
    expect(direct.body.error.request_id).toBeTypeOf('string');
  });

  it('refuses before the rate limit is charged and before last_used_at is recorded', async () => {
    const { id, key } = await createKey({ allowed_ips: ['203.0.113.7'], rate_limit_per_minute: 1 });
    for (let i = 0; i < 3; i++) {
      const refused = await getAgent(key, '198.51.100.1').expect(403);
      expect(refused.headers['x-ratelimit-remaining']).toBeUndefined();
    }
    await ctx.container.lastUsed.flush();
    expect((await ctx.db('api_keys').where({ id }).first('last_used_at')).last_used_at).toBeNull();
    const allowed = await getAgent(key, '203.0.113.7').expect(200);
    expect(allowed.headers['x-ratelimit-remaining']).toBe('0');
    await getAgent(key, '203.0.113.7').expect(429);
    await getAgent(key, '198.51.100.1').expect(403); // the address is judged first, even when out of budget
  });

  it('takes effect on the next request after a PATCH, and null lets every address in again', async () => {
    const { id, key } = await createKey({});
    await getAgent(key, '198.51.100.1').expect(200);
    await ctx.http
      .patch(`/v1/api-keys/${id}`)
      .set(bearer())
      .send({ allowed_ips: ['203.0.113.7'] })
      .expect(200);
    await getAgent(key, '198.51.100.1').expect(403);
    await getAgent(key, '203.0.113.7').expect(200);
    await ctx.http.patch(`/v1/api-keys/${id}`).set(bearer()).send({ allowed_ips: null }).expect(200);
    await getAgent(key, '198.51.100.1').expect(200);
  });

  it('does not apply to dashboard tokens, and a key of another organization is 404 to PATCH', async () => {
    await ctx.http.get(`/v1/agents/${w.agentId}`).set(bearer()).set('X-Forwarded-For', '198.51.100.1').expect(200);
    const other = await ctx.build.world();
    const res = await ctx.http
      .patch(`/v1/api-keys/${other.keyId}`)
      .set(bearer())
      .send({ allowed_ips: ['203.0.113.7'] })
      .expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect(await storedIps(other.keyId)).toBeNull();
  });
});

describe('the client address without a list of proxies', () => {
  const appTrusting = (TRUST_PROXY: false | 1) =>
    createApp({
      config: { ...ctx.config, TRUST_PROXY },
      db: ctx.db,
      databaseUrl: ctx.config.DATABASE_URL!,
      logger: ctx.logger,
      clock: ctx.clock,
      rateLimitStore: new MemoryRateLimitStore(),
      verifyToken: createTokenVerifier(ctx.config),
      queue: ctx.queue,
    }).app;

  it("judges the socket's address and ignores X-Forwarded-For (TRUST_PROXY=false)", async () => {
    // supertest listens on every interface: the socket may be IPv4-mapped (::ffff:127.0.0.1).
    const direct = checkedHttp(appTrusting(false), ctx.contract);
    const local = await createKey({ allowed_ips: ['127.0.0.1'] });
    const remote = await createKey({ allowed_ips: ['203.0.113.0/24'] });
    const call = (key: string) =>
      direct.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key).set('X-Forwarded-For', '203.0.113.9');
    await call(local.key).expect(200);
    expect((await call(remote.key).expect(403)).body.error.code).toBe('IP_NOT_ALLOWED');
  });

  it('takes the right-most X-Forwarded-For entry, never one the client wrote further left (TRUST_PROXY=true)', async () => {
    const behindOneProxy = checkedHttp(appTrusting(1), ctx.contract);
    const remote = await createKey({ allowed_ips: ['203.0.113.0/24'] });
    const call = (forwarded: string) =>
      behindOneProxy.get(`/v1/agents/${w.agentId}`).set('X-API-Key', remote.key).set('X-Forwarded-For', forwarded);
    await call('203.0.113.9').expect(200);
    // The client wrote an allowed address; the proxy appended the one it saw.
    expect((await call('203.0.113.9, 198.51.100.7').expect(403)).body.error.code).toBe('IP_NOT_ALLOWED');
  });
});

describe('the MCP server', () => {
  const connect = async (headers: Record<string, string>) => {
    const client = new Client({ name: 'allow-list-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ctx.baseUrl}/mcp`), { requestInit: { headers } }),
    );
    return client;
  };

  it("judges a tool call by the MCP caller's address, not the server's own", async () => {
    const { key } = await createKey({ allowed_ips: ['203.0.113.0/24'] });
    const client = await connect({ 'X-API-Key': key, 'X-Forwarded-For': '203.0.113.9' });
    try {
      const result = (await client.callTool({ name: 'getAgent', arguments: { agentId: w.agentId } })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toMatchObject({ id: w.agentId });
    } finally {
      await client.close();
    }
    const refused = await ctx.http
      .post('/mcp')
      .set('X-API-Key', key)
      .set('X-Forwarded-For', '198.51.100.1')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })
      .expect(403);
    expect(refused.body.error.code).toBe('IP_NOT_ALLOWED');
  });

  it('does not take a client address sent without the server secret', async () => {
    const { key } = await createKey({ allowed_ips: ['203.0.113.0/24'] });
    const res = await getAgent(key, '198.51.100.1')
      .set('X-Vam-Client-Address', '203.0.113.9')
      .set('X-Vam-Internal', '00'.repeat(32))
      .expect(403);
    expect(res.body.error.code).toBe('IP_NOT_ALLOWED');
  });
});
