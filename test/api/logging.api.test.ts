import { Writable } from 'node:stream';
import { pino } from 'pino';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { REDACT_PATHS } from '../../src/logger.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

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
  http = supertest(app);
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
});
