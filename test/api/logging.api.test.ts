import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { createLogger, REDACT_PATHS } from '../../src/logger.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { checkedHttp } from '../support/contract.js';

let ctx: TestContext;
let w: World;
const lines: string[] = [];
let http: ReturnType<typeof supertest>;

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  // The app as main.ts builds it, logging at debug into memory.
  const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  const { app } = createApp({
    config: ctx.config,
    db: ctx.db,
    databaseUrl: ctx.config.DATABASE_URL!,
    logger,
    clock: ctx.clock,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(ctx.config),
    queue: ctx.queue,
  });
  http = checkedHttp(app, ctx.contract);
});
afterAll(() => ctx.close());

describe('request logs', () => {
  it('write one JSON line per request with its request id, and never a key or a token', async () => {
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).set('X-Request-Id', 'trace-abc-1').expect(200);
    await http
      .get('/v1/api-keys')
      .set('Authorization', `Bearer ${w.token}`)
      .set('X-Request-Id', 'trace-abc-2')
      .expect(200);
    await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', 'svc_live_0123456789abcdef0123456789abcdef').expect(401);
    const created = await http
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ name: 'logged?', permissions: ['agents:read'] })
      .expect(201);

    const parsed = lines.map((l) => JSON.parse(l));
    const first = parsed.find((l) => l.req?.id === 'trace-abc-1');
    expect(first).toMatchObject({ msg: 'request completed', req: { method: 'GET' }, res: { statusCode: 200 } });
    expect(parsed.some((l) => l.req?.id === 'trace-abc-2')).toBe(true);
    const all = lines.join('\n');
    for (const secret of [w.key, w.token, created.body.key, 'svc_live_0123456789abcdef0123456789abcdef'])
      expect(all).not.toContain(secret);
  });

  it('redact keys, tokens and secrets wherever code logs them', () => {
    lines.length = 0;
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    logger.info(
      { key: 'svc_live_x', token: 'eyJ.x', secret: 'whsec_x', headers: { authorization: 'Bearer eyJ.y' } },
      'oops',
    );
    expect(lines.join('')).not.toMatch(/svc_live_x|eyJ\.x|whsec_x|eyJ\.y/);
  });

  it('show method, route template, status, duration and the caller, and no query-string values', async () => {
    lines.length = 0;
    await http
      .get(`/v1/agents/${w.agentId}/calls?phone_number=%2B4930999888&search=Erika&page=1`)
      .set('X-API-Key', w.key)
      .set('X-Request-Id', 'trace-route-1')
      .expect(200);
    await http
      .get('/v1/me?include=secret-value')
      .set('Authorization', `Bearer ${w.token}`)
      .set('X-Request-Id', 'trace-route-2');
    const parsed = lines.map((l) => JSON.parse(l));
    const byKey = parsed.find((l) => l.req?.id === 'trace-route-1');
    expect(byKey).toMatchObject({
      msg: 'request completed',
      req: {
        method: 'GET',
        path: `/v1/agents/${w.agentId}/calls`,
        query_keys: ['phone_number', 'search', 'page'],
      },
      res: { statusCode: 200 },
      route: '/v1/agents/{agentId}/calls',
      auth_kind: 'api_key',
      api_key_id: w.keyId,
      key_prefix: w.key.slice(0, 13),
      organization_ids: [w.orgId],
    });
    expect(typeof byKey.responseTime).toBe('number');
    const byToken = parsed.find((l) => l.req?.id === 'trace-route-2');
    expect(byToken).toMatchObject({ route: '/v1/me', auth_kind: 'token', organization_ids: [w.orgId] });
    expect(typeof byToken.user_id).toBe('string');
    const all = lines.join('\n');
    for (const value of ['4930999888', 'Erika', 'secret-value', w.key]) expect(all).not.toContain(value);
  });

  it('name at most ten organizations of a caller and count the rest', async () => {
    const org = await ctx.build.organization();
    const user = await ctx.build.user(org.id, 'developer_admin');
    for (let i = 0; i < 11; i++) await ctx.build.member(user.id, (await ctx.build.organization()).id, 'member');
    lines.length = 0;
    await http
      .get('/v1/me')
      .set('Authorization', `Bearer ${ctx.build.token(user.id)}`)
      .set('X-Request-Id', 'trace-many-orgs')
      .expect(200);
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.req?.id === 'trace-many-orgs');
    expect(line).toMatchObject({ auth_kind: 'token', user_id: user.id, organization_count: 12 });
    expect(line.organization_ids).toHaveLength(10);
    expect(new Set(line.organization_ids).size).toBe(10);
    expect(line).not.toHaveProperty('api_key_id');
    expect(line).not.toHaveProperty('key_prefix');
  });

  it('write a line within one second on an otherwise quiet logger', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vam-log-'));
    const file = path.join(dir, 'out.log');
    try {
      const logger = createLogger({ LOG_LEVEL: 'info' }, file);
      const started = performance.now();
      logger.info({ probe: 1 }, 'listening on http://127.0.0.1:1');
      await expect
        .poll(() => readFileSync(file, 'utf8').includes('listening on http://127.0.0.1:1'), {
          timeout: 1000,
          interval: 5,
        })
        .toBe(true);
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('response headers', () => {
  it('carry nosniff on every response and no-store on every API response', async () => {
    const responses = [
      await http.get('/v1/health'),
      await http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key),
      await http.get('/v1/nowhere').set('X-API-Key', w.key),
      await http.get('/v1/agents').set('X-API-Key', 'bad'),
      await http.get('/elsewhere'),
    ];
    for (const res of responses) expect(res.headers['x-content-type-options']).toBe('nosniff');
    for (const res of responses.slice(0, 4)) expect(res.headers['cache-control']).toBe('no-store');
  });

  it('keep a newly created key and the webhook secret out of caches', async () => {
    const created = await http
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${w.token}`)
      .send({ name: 'no-store', permissions: ['agents:read'] })
      .expect(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const secret = await http
      .get(`/v1/organization/${w.orgId}/webhook-secret`)
      .set('Authorization', `Bearer ${w.token}`)
      .expect(200);
    expect(secret.headers['cache-control']).toBe('no-store');
  });
});
