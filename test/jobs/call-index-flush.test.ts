import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallIndexFlushWorker } from '../../src/modules/calls/call-index-flush.worker.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('call index flush', () => {
  it("merges the pending lists of the calls' GIN indexes, keeps what search finds, and skips while another instance merges", async () => {
    const world = await ctx.build.world();
    const flush = ctx.internals.callIndexFlush;
    // Whatever earlier writes left pending.
    await flush.flush();
    // Fewer calls than autovacuum's thresholds: nothing else merges the lists meanwhile.
    for (let i = 0; i < 5; i++)
      await ctx.http
        .post(`/v1/agents/${world.agentId}/calls`)
        .set('X-API-Key', world.key)
        .send({
          call_id: `flush-${i}`,
          duration: 30,
          customer_name: `Quirinus Flushwell ${i}`,
          transcript: [{ role: 'user', text: 'Die Heizung im Keller tropft seit gestern.' }],
        })
        .expect(201);

    // Another instance holds the lock: this one skips its turn instead of waiting.
    await ctx.db.transaction(async (trx) => {
      await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('call_index_flush', 0))`);
      expect(await flush.flush()).toBeNull();
    });

    const merged = await flush.flush();
    expect(merged).toBeGreaterThan(0);
    expect(await flush.flush()).toBe(0);

    const found = await ctx.http
      .get(`/v1/agents/${world.agentId}/calls`)
      .query({ search: 'flushwell' })
      .set('X-API-Key', world.key)
      .expect(200);
    expect(found.body.pagination.total).toBe(5);
    const byTranscript = await ctx.http
      .get(`/v1/agents/${world.agentId}/calls`)
      .query({ search: 'keller tropft' })
      .set('X-API-Key', world.key)
      .expect(200);
    expect(byTranscript.body.pagination.total).toBe(5);
  });

  it('runs as a worker: it merges every interval from its start on', async () => {
    const world = await ctx.build.world();
    await ctx.internals.callIndexFlush.flush();
    const worker = new CallIndexFlushWorker(ctx.db, ctx.logger, 20);
    const merges: (number | null)[] = [];
    const flush = worker.flush.bind(worker);
    worker.flush = async () => {
      const pages = await flush();
      merges.push(pages);
      return pages;
    };
    await worker.start();
    await ctx.http
      .post(`/v1/agents/${world.agentId}/calls`)
      .set('X-API-Key', world.key)
      .send({ call_id: 'worker-1', duration: 30, customer_name: 'Ottilie Worker' })
      .expect(201);
    await expect.poll(() => merges.some((pages) => pages !== null && pages > 0), { timeout: 10_000 }).toBe(true);
    await worker.stop();
  });
});
