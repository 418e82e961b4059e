import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const lastUsed = async (id: string) =>
  (await ctx.db('api_keys').where({ id }).first('last_used_at')).last_used_at as Date | null;

/** The statements that write last_used_at while `work` runs and the pending batch is flushed. */
async function lastUsedWrites(work: () => Promise<void>): Promise<string[]> {
  const writes: string[] = [];
  const listen = (q: { sql: string }) => {
    if (/update\s+api_keys/i.test(q.sql) && q.sql.includes('last_used_at')) writes.push(q.sql);
  };
  await ctx.container.lastUsed.flush();
  ctx.db.on('query', listen);
  try {
    await work();
    await ctx.container.lastUsed.flush();
  } finally {
    ctx.db.off('query', listen);
  }
  return writes;
}

describe('last_used_at', () => {
  it('is written once for many requests with one key within the minute, and shows in the key', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    const at = ctx.clock.now();
    const writes = await lastUsedWrites(async () => {
      for (let i = 0; i < 20; i++) {
        await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
        ctx.clock.advance(1000);
      }
    });
    expect(writes).toHaveLength(1);
    expect((await lastUsed(key.id))?.getTime()).toBe(at.getTime());
    const shown = await ctx.http.get(`/v1/api-keys/${key.id}`).set('Authorization', `Bearer ${w.token}`).expect(200);
    expect(shown.body.last_used_at).toBe(at.toISOString());
    ctx.clock.set(new Date());
  });

  it('writes the keys used within a batch in one statement, and again a minute later', async () => {
    const keys = await Promise.all([1, 2, 3].map(() => ctx.build.apiKey(w.orgId, w.userId)));
    const use = async () => {
      for (const key of keys) await ctx.http.get('/v1/agents').set('X-API-Key', key.key).expect(200);
    };
    expect(await lastUsedWrites(use)).toHaveLength(1);
    for (const key of keys) expect(await lastUsed(key.id)).not.toBeNull();
    expect(await lastUsedWrites(use)).toHaveLength(0); // within the minute: nothing due
    const first = await lastUsed(keys[0]!.id);
    ctx.clock.advance(61_000);
    expect(await lastUsedWrites(use)).toHaveLength(1);
    expect((await lastUsed(keys[0]!.id))!.getTime()).toBe(first!.getTime() + 61_000);
    ctx.clock.set(new Date());
  });

  it('never lets a failed write reach a request', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId);
    await ctx.db.raw('ALTER TABLE api_keys ADD CONSTRAINT test_no_last_used CHECK (last_used_at IS NULL) NOT VALID');
    try {
      await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
      await ctx.container.lastUsed.flush(); // logged and dropped
      await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', key.key).expect(200);
    } finally {
      await ctx.db.raw('ALTER TABLE api_keys DROP CONSTRAINT test_no_last_used');
    }
    expect(await lastUsed(key.id)).toBeNull();
  });
});
