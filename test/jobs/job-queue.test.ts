import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SEND_QUEUE } from '../../src/jobs/queue-definitions.js';
import { queryOnConnection } from '../../src/platform/knex.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** Rolls back whatever `work` did in the transaction. */
async function rolledBack(work: Parameters<TestContext['db']['transaction']>[0]): Promise<void> {
  const rollback = new Error('roll back');
  await expect(
    ctx.db.transaction(async (trx) => {
      await work(trx);
      throw rollback;
    }),
  ).rejects.toBe(rollback);
}

const jobsWith = (marker: string) =>
  ctx.db('pgboss.job').where({ name: WEBHOOK_SEND_QUEUE }).whereRaw(`data->>'marker' = ?`, [marker]);

describe('job queue', () => {
  it('completes fetched jobs inside the given transaction: a rollback leaves them active', async () => {
    await ctx.queue.sendMany(WEBHOOK_SEND_QUEUE, [{ marker: 'complete-a' }, { marker: 'complete-b' }]);
    const jobs = (await ctx.queue.fetch<{ marker: string }>(WEBHOOK_SEND_QUEUE, 10)).filter((j) =>
      j.data.marker.startsWith('complete-'),
    );
    expect(jobs).toHaveLength(2);
    const ids = jobs.map((j) => j.id);

    await rolledBack((trx) => ctx.queue.complete(WEBHOOK_SEND_QUEUE, ids, trx));
    const active = await ctx.db('pgboss.job').whereIn('id', ids).select('state');
    expect(active.map((j: { state: string }) => j.state)).toEqual(['active', 'active']);

    await ctx.db.transaction((trx) => ctx.queue.complete(WEBHOOK_SEND_QUEUE, ids, trx));
    const done = await ctx.db('pgboss.job').whereIn('id', ids).select('state', 'output');
    // Completed with no output (the transaction is not stored as the job's output).
    expect(done).toEqual([
      { state: 'completed', output: null },
      { state: 'completed', output: null },
    ]);
  });

  it('enqueues a batch in the given transaction and tells listeners of this process only after the commit', async () => {
    let told = 0;
    const unsubscribe = ctx.queue.onQueued(WEBHOOK_SEND_QUEUE, () => {
      told += 1;
    });
    try {
      await rolledBack((trx) => ctx.queue.sendMany(WEBHOOK_SEND_QUEUE, [{ marker: 'rolled-back' }], { trx }));
      expect(await jobsWith('rolled-back')).toEqual([]);
      expect(told).toBe(0);

      await ctx.db.transaction(async (trx) => {
        await ctx.queue.sendMany(WEBHOOK_SEND_QUEUE, [{ marker: 'batch' }, { marker: 'batch' }], { trx });
        expect(told).toBe(0);
      });
      expect(await jobsWith('batch')).toHaveLength(2);
      // Told once per enqueue, not once per job.
      expect(told).toBe(1);

      await ctx.queue.sendMany(WEBHOOK_SEND_QUEUE, []);
      expect(told).toBe(1);
    } finally {
      unsubscribe();
    }
    await ctx.queue.send(WEBHOOK_SEND_QUEUE, { marker: 'after' });
    expect(told).toBe(1);
  });

  it('enqueues a conditional job statement only when its condition holds', async () => {
    for (const [marker, holds] of [
      ['condition-true', true],
      ['condition-false', false],
    ] as const) {
      const job = await ctx.queue.sendStatementIf(WEBHOOK_SEND_QUEUE, { marker }, 'EXISTS (SELECT 1 FROM c)');
      const text = `WITH c AS (SELECT 1 WHERE ${holds}), job AS (${job.text}) SELECT 1`;
      await queryOnConnection(ctx.db, { text, values: job.values });
      expect(await jobsWith(marker)).toHaveLength(holds ? 1 : 0);
    }
  });

  it('refuses a batch for a queue that is not defined instead of dropping it', async () => {
    await expect(ctx.queue.sendMany('no.such.queue', [{}])).rejects.toThrow(/not in QUEUE_DEFINITIONS/);
  });
});
