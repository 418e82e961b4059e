import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

/**
 * Intakes made while one is in flight go to the database together, as one statement
 * (src/db/statement-batches.ts). A transaction holding the agent's day counters makes the first
 * intake wait in the database, so that the others are made meanwhile and wait behind it.
 */
let ctx: TestContext;
/** Statements run, by text (knex's `query` event, which prepared statements emit too). */
const statements: string[] = [];
beforeAll(async () => {
  ctx = await createTestContext();
  ctx.db.on('query', (query: { sql: string }) => statements.push(query.sql));
});
afterAll(() => ctx.close());

const calls = (agentId: string) => `/v1/agents/${agentId}/calls`;
const body = (callId: string) => ({ call_id: callId, phone_number: '+4930111222', duration: 40, done: true });
const post = (world: World, callId: string, requestId = callId) =>
  ctx.http.post(calls(world.agentId)).set('X-API-Key', world.key).set('X-Request-Id', requestId).send(body(callId));
const batches = () => statements.filter((sql) => sql.includes('statement_in_batch')).length;

/**
 * `intakes` made while a transaction holds the agent's day counters, until the first of them waits
 * for it and the others had time to be made; then the transaction ends. Gives their answers.
 */
async function heldBack<T>(world: World, intakes: (() => PromiseLike<T>)[]): Promise<T[]> {
  const trx: Knex.Transaction = await ctx.db.transaction();
  try {
    await trx('call_day_counts').where({ agent_id: world.agentId }).forUpdate().select('calls');
    const answers = Promise.all(intakes.map((intake) => intake()));
    for (let waiting = 0; waiting < 1;) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const { rows } = await ctx.db.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query ILIKE '%insert into calls %' AND datname = current_database()`,
      );
      waiting = rows[0].n;
    }
    // The others read nothing before their statement: they wait behind the first one once made.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await trx.commit();
    return await answers;
  } finally {
    if (!trx.isCompleted()) await trx.rollback();
  }
}

const dispatchJobs = async (eventIds: string[]) =>
  (
    await ctx.db.raw(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'events.dispatch' AND data->>'eventId' = ANY(?)`,
      [eventIds],
    )
  ).rows[0].n as number;

describe('call intakes made at once', () => {
  it('go as one statement, each with its own call, event, dispatch job, audit row and count', async () => {
    const world = await ctx.build.world();
    // Done calls go to the trash: each statement of the batch reads the setting.
    await ctx.db('organizations').where({ id: world.orgId }).update({ auto_delete_done_calls: true });
    // Makes the agent's counter rows, which the held transaction then locks.
    await post(world, 'batch-first').expect(201);
    const before = batches();
    const ids = Array.from({ length: 8 }, (_, i) => `batch-${i}`);
    const answers = await heldBack(
      world,
      ids.map((id) => () => post(world, id)),
    );
    expect(answers.map((res) => res.status)).toEqual(ids.map(() => 201));
    expect(batches()).toBeGreaterThan(before);
    expect(answers.map((res) => res.body.call_id)).toEqual(ids);

    const stored = await ctx.db('calls').where({ agent_id: world.agentId }).whereIn('call_id', ids);
    expect(stored.map((row) => row.id).sort()).toEqual(answers.map((res) => res.body.id).sort());
    expect(stored.every((row) => row.deleted_at?.getTime() === row.created_at.getTime())).toBe(true);
    const events = await ctx.db('events').where({ agent_id: world.agentId, type: 'call.completed' });
    expect(events).toHaveLength(ids.length + 1);
    for (const res of answers)
      expect(events.filter((e) => e.payload.call.id === res.body.id).map((e) => e.payload.call.call_id)).toEqual([
        res.body.call_id,
      ]);
    expect(await dispatchJobs(events.map((e) => e.id))).toBe(ids.length + 1);
    const audited = await ctx.db('audit_log').whereIn('request_id', ids);
    expect(audited.map((row) => row.request_id).sort()).toEqual([...ids].sort());
    expect(audited.every((row) => row.action === 'agents.calls.create' && row.agent_id === world.agentId)).toBe(true);
    const counted = await ctx.db('call_day_counts').where({ agent_id: world.agentId }).sum({ n: 'calls' }).first();
    expect(Number(counted?.n)).toBe(ids.length + 1);
    const hours = await ctx.db('call_hour_stats').where({ agent_id: world.agentId }).sum({ n: 'calls' }).first();
    expect(Number(hours?.n)).toBe(ids.length + 1);
  });

  it('store the good calls when one among them repeats a call_id: the repeat alone answers with the stored call', async () => {
    const world = await ctx.build.world();
    const first = await post(world, 'repeat-in-batch').expect(201);
    const before = batches();
    const ids = ['good-1', 'good-2', 'repeat-in-batch', 'good-3', 'good-4'];
    const answers = await heldBack(
      world,
      ids.map((id, i) => () => post(world, id, `request-${i}`)),
    );
    expect(answers.map((res) => res.status)).toEqual([201, 201, 200, 201, 201]);
    expect(batches()).toBeGreaterThan(before);
    expect(answers[2]!.body).toEqual(first.body);

    const stored = await ctx.db('calls').where({ agent_id: world.agentId });
    expect(stored.map((row) => row.call_id).sort()).toEqual([
      'good-1',
      'good-2',
      'good-3',
      'good-4',
      'repeat-in-batch',
    ]);
    const events = await ctx.db('events').where({ agent_id: world.agentId, type: 'call.completed' });
    expect(events.map((e) => e.payload.call.call_id).sort()).toEqual([
      'good-1',
      'good-2',
      'good-3',
      'good-4',
      'repeat-in-batch',
    ]);
    expect(await dispatchJobs(events.map((e) => e.id))).toBe(5);
    const counted = await ctx.db('call_day_counts').where({ agent_id: world.agentId }).sum({ n: 'calls' }).first();
    expect(Number(counted?.n)).toBe(5);
    // Every request has its audit row, the repeat's too (written after its insert failed, as alone).
    const audited = await ctx.db('audit_log').where({ agent_id: world.agentId, action: 'agents.calls.create' });
    expect(audited).toHaveLength(6);
  });
});
