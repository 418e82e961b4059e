import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_DISPATCH_QUEUE } from '../../src/jobs/queue-definitions.js';
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

/** A call.completed event for a new agent whose post-call webhook goes to the receiver. */
async function recordCallEvent(): Promise<{ eventId: string; url: string }> {
  const url = receiver.url('ok');
  const agent = await ctx.build.agent(w.orgId, { post_call_webhook_url: url });
  const eventId = await ctx.db.transaction((trx) =>
    ctx.internals.events.record(trx, {
      organization_id: w.orgId,
      agent_id: agent.id,
      type: 'call.completed',
      payload: { event: 'call.completed', call: { id: agent.id } },
    }),
  );
  return { eventId, url };
}

/** What pg-boss leaves behind when a dispatch job used up its retries. */
async function exhaustDispatchJob(eventId: string): Promise<void> {
  const { rowCount } = await ctx.db.raw(
    `UPDATE pgboss.job SET state = 'failed', completed_on = now() WHERE name = ? AND data->>'eventId' = ?`,
    [EVENT_DISPATCH_QUEUE, eventId],
  );
  expect(rowCount).toBe(1);
}

const dispatchedAt = async (eventId: string) =>
  (await ctx.db('events').where({ id: eventId }).first('dispatched_at')).dispatched_at as Date | null;

describe('webhook sweeper', () => {
  it('re-dispatches an event whose dispatch job gave up, once the minimum age has passed', async () => {
    const { eventId, url } = await recordCallEvent();
    await exhaustDispatchJob(eventId);
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(0);

    // Too young: it may still be on its way.
    expect(await ctx.internals.webhookSweeper.run()).toBe(0);

    ctx.clock.advance(2 * 60_000);
    expect(await ctx.internals.webhookSweeper.run()).toBe(1);
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(receiver.requestsTo(url)[0]!.headers['webhook-id']).toBe(eventId);
    expect(await dispatchedAt(eventId)).not.toBeNull();
  });

  it('never delivers twice: swept again, or dispatched by a second job, the event is sent once', async () => {
    const { eventId, url } = await recordCallEvent();
    await exhaustDispatchJob(eventId);
    ctx.clock.advance(2 * 60_000);

    expect(await ctx.internals.webhookSweeper.run()).toBe(1);
    // A second sweep (another instance, the next minute) sees the live job and leaves it.
    expect(await ctx.internals.webhookSweeper.run()).toBe(0);
    // Even a duplicate dispatch job does nothing once the event is dispatched.
    await ctx.queue.send(EVENT_DISPATCH_QUEUE, { eventId });
    await ctx.internals.webhookWorker.drain();
    expect(await ctx.internals.webhookSweeper.run()).toBe(0);
    await ctx.internals.webhookWorker.drain();

    expect(receiver.requestsTo(url)).toHaveLength(1);
    expect(await ctx.db('webhook_deliveries').where({ event_id: eventId }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('leaves an event alone while its dispatch job is still waiting for a retry', async () => {
    const { eventId, url } = await recordCallEvent();
    await ctx.db.raw(`UPDATE pgboss.job SET state = 'retry' WHERE name = ? AND data->>'eventId' = ?`, [
      EVENT_DISPATCH_QUEUE,
      eventId,
    ]);
    ctx.clock.advance(2 * 60_000);
    expect(await ctx.internals.webhookSweeper.run()).toBe(0);
    await ctx.internals.webhookWorker.drain();
    expect(receiver.requestsTo(url)).toHaveLength(1);
  });

  it('ignores events that were dispatched already', async () => {
    const { eventId } = await recordCallEvent();
    await ctx.internals.webhookWorker.drain();
    expect(await dispatchedAt(eventId)).not.toBeNull();
    ctx.clock.advance(2 * 60_000);
    expect(await ctx.internals.webhookSweeper.run()).toBe(0);
  });
});
