import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';
import type { World } from '../support/builders.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

// Windows are aligned to the clock: start each test at the beginning of an hour.
function startOfNextHour(): Date {
  const d = new Date(Date.now() + 3_600_000);
  d.setUTCMinutes(0, 0, 0);
  return d;
}

describe('Rate limits per API key', () => {
  it('sends the three headers on every API-key response', async () => {
    const at = startOfNextHour();
    ctx.clock.set(new Date(at.getTime() + 15_000));
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 5 });
    const res = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('5');
    expect(res.headers['x-ratelimit-remaining']).toBe('4');
    expect(res.headers['x-ratelimit-reset']).toBe(String(at.getTime() / 1000 + 60));
    const err = await ctx.http.get('/v1/agents/nope').set('X-API-Key', key.key).expect(400);
    expect(err.headers['x-ratelimit-remaining']).toBe('3');
  });

  it('refuses past the minute limit with Retry-After 60 and recovers in the next minute', async () => {
    const at = startOfNextHour();
    ctx.clock.set(at);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 3, rateLimitPerHour: 100 });
    const call = () => ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key);
    for (let i = 0; i < 3; i++) await call().expect(200);
    const limited = await call().expect(429);
    expect(limited.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'Rate limit exceeded. Try again in 60 seconds.',
    });
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-limit']).toBe('3');
    ctx.clock.advance(60_000);
    await call().expect(200);
  });

  it('refuses past the hour limit with Retry-After 3600, and a refused request uses up no quota', async () => {
    const at = startOfNextHour();
    ctx.clock.set(at);
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 2, rateLimitPerHour: 5 });
    const call = () => ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key);
    // Minute 1: 2 allowed, then 3 refused by the minute window; they must not count in the hour.
    await call().expect(200);
    await call().expect(200);
    for (let i = 0; i < 3; i++) expect((await call().expect(429)).headers['retry-after']).toBe('60');
    ctx.clock.advance(60_000);
    await call().expect(200);
    await call().expect(200);
    ctx.clock.advance(60_000);
    await call().expect(200); // 5th counted request of the hour
    const limited = await call().expect(429);
    expect(limited.headers['retry-after']).toBe('3600');
    expect(limited.body.error.message).toBe('Rate limit exceeded. Try again in 3600 seconds.');
    // Refusals by the hour window use no minute quota: the next hour starts clean.
    ctx.clock.set(new Date(at.getTime() + 3_600_000));
    const fresh = await call().expect(200);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('applies a PATCH of the limits to the very next request', async () => {
    ctx.clock.set(startOfNextHour());
    const key = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1 });
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(429);
    await ctx.http
      .patch(`/v1/api-keys/${key.id}`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ rate_limit_per_minute: 10 })
      .expect(200);
    const res = await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    expect(res.headers['x-ratelimit-limit']).toBe('10');
  });

  it('keeps separate counters per key', async () => {
    ctx.clock.set(startOfNextHour());
    const a = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1 });
    const b = await ctx.build.apiKey(w.orgId, w.userId, { rateLimitPerMinute: 1 });
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', a.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', b.key).expect(200);
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', a.key).expect(429);
  });
});
