import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as callKeys from '../../migrations/20261129140100_create_call_keys.js';
import * as partitionByMonth from '../../migrations/20261129140000_partition_by_month.js';
import * as mergeInsertTriggers from '../../migrations/20261129190000_merge_calls_insert_triggers.js';
import { PartitionMaintenance } from '../../src/db/partitions.js';
import { timeOfId } from '../../src/db/time-ids.js';
import { CallRepository } from '../../src/modules/calls/call.repository.js';
import { AuditRetention } from '../../src/modules/audit-log/audit-retention.worker.js';
import { AuditLogRepository } from '../../src/audit/audit-log.repository.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let partitions: PartitionMaintenance;
beforeAll(async () => {
  ctx = await createTestContext();
  partitions = new PartitionMaintenance(ctx.db, ctx.logger);
});
afterAll(() => ctx.close());

const TABLES = ['calls', 'events', 'webhook_deliveries', 'webhook_delivery_attempts', 'audit_log'];

/** Seeds `n` rows per table (call_ids unique per world) spread over the months from 2025-03 to 2026-11 (every 3rd day at a varying hour). */
async function seed(world: World, n: number) {
  const at = `timestamptz '2026-11-20T10:00:00Z' - (g * interval '1 day' * 600 / ${n}) - (g % 24) * interval '1 hour'`;
  const bind = { org: world.orgId, agent: world.agentId };
  await ctx.db.raw(
    `INSERT INTO calls (organization_id, agent_id, call_id, customer_name, phone_number, duration, created_at, updated_at)
     SELECT :org, :agent, 'seed-' || g, 'Name ' || g, '+4930' || g, g % 300, ${at}, ${at} FROM generate_series(1, ${n}) g`,
    bind,
  );
  await ctx.db.raw(
    `INSERT INTO events (organization_id, agent_id, type, payload, created_at, dispatched_at)
     SELECT :org, :agent, 'call.completed', jsonb_build_object('n', g), ${at}, ${at} FROM generate_series(1, ${n}) g`,
    bind,
  );
  await ctx.db.raw(
    `INSERT INTO webhook_deliveries (organization_id, agent_id, event_id, event_type, target_kind, target_url, status, created_at, updated_at)
     SELECT organization_id, agent_id, id, type, 'agent', 'https://example.com/hook', 'succeeded', created_at, created_at
       FROM events WHERE organization_id = :org`,
    bind,
  );
  await ctx.db.raw(
    `INSERT INTO webhook_delivery_attempts (delivery_id, organization_id, job_id, attempt_number, trigger, status, http_status, duration_ms, attempted_at)
     SELECT id, organization_id, gen_random_uuid(), 1, 'event', 'succeeded', 200, 12, created_at
       FROM webhook_deliveries WHERE organization_id = :org`,
    bind,
  );
  await ctx.db.raw(
    `INSERT INTO audit_log (organization_id, agent_id, action, method, route, resource_type, resource_id, actor_type, request_id, created_at)
     SELECT :org, :agent, 'call.update', 'PATCH', '/v1/agents/{agentId}/calls/{callId}', 'call', g::text, 'api_key', 'req-' || g, ${at}
       FROM generate_series(1, ${n}) g`,
    bind,
  );
}

/** Row count and a checksum of every row's text, per table. */
async function fingerprint() {
  const result: Record<string, { rows: number; md5: string }> = {};
  for (const table of TABLES) {
    const { rows } = await ctx.db.raw(
      `SELECT count(*)::int AS rows, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS md5 FROM ${table} t`,
    );
    result[table] = rows[0];
  }
  const counters = await ctx.db.raw(`SELECT sum(calls)::int AS calls FROM call_day_counts`);
  return { tables: result, counted: counters.rows[0].calls as number };
}

async function kinds(): Promise<Record<string, string>> {
  const { rows } = await ctx.db.raw(`SELECT relname, relkind FROM pg_class WHERE relname = ANY(?) ORDER BY relname`, [
    TABLES,
  ]);
  return Object.fromEntries(rows.map((r: { relname: string; relkind: string }) => [r.relname, r.relkind]));
}

describe('monthly partitions', () => {
  it('converts a seeded database down to plain tables and back without losing or changing a row', async () => {
    const world = await ctx.build.world();
    await seed(world, 3000);
    const before = await fingerprint();
    expect(before.tables.calls.rows).toBeGreaterThanOrEqual(3000);
    expect(before.tables.webhook_delivery_attempts.rows).toBeGreaterThanOrEqual(3000);

    // Back through the later migration that changed the triggers on calls, then the conversion.
    await ctx.db.transaction((trx) => mergeInsertTriggers.down(trx));
    await ctx.db.transaction((trx) => callKeys.down(trx));
    await ctx.db.transaction((trx) => partitionByMonth.down(trx));
    expect(Object.values(await kinds())).toEqual(['r', 'r', 'r', 'r', 'r']);
    expect(await fingerprint()).toEqual(before);

    await ctx.db.transaction((trx) => partitionByMonth.up(trx));
    await ctx.db.transaction((trx) => callKeys.up(trx));
    await ctx.db.transaction((trx) => mergeInsertTriggers.up(trx));
    expect(Object.values(await kinds())).toEqual(['p', 'p', 'p', 'p', 'p']);
    expect(await fingerprint()).toEqual(before);

    // One partition per month with rows (2025-03 .. 2026-11), nothing left in the default partitions.
    const months = (await partitions.months('calls')).map((p) => p.name);
    expect(months).toContain('calls_p2025_04');
    expect(months).toContain('calls_p2026_11');
    for (const table of TABLES) {
      const { rows } = await ctx.db.raw(`SELECT count(*)::int AS n FROM ${table}_default`);
      expect(rows[0].n).toBe(0);
    }

    // The API reads the converted calls; a repeated call_id is still one call, across months.
    const list = await ctx.http
      .get(`/v1/agents/${world.agentId}/calls?limit=1`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(list.body.pagination.total).toBe(before.tables.calls.rows);
    ctx.clock.set(new Date('2026-11-25T12:00:00Z'));
    const again = await ctx.http
      .post(`/v1/agents/${world.agentId}/calls`)
      .set('X-API-Key', world.key)
      .send({ call_id: 'seed-2999', duration: 5 })
      .expect(200);
    expect(again.body.customer_name).toBe('Name 2999');
  }, 120_000);

  it('keeps a lookup by id an index scan in every partition', async () => {
    const world = await ctx.build.world();
    await partitions.ensure(new Date('2026-11-29T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    await seed(world, 600);
    // One busy month: where a partition has more than a few pages, the planner's choice is what counts.
    await ctx.db.raw(
      `INSERT INTO calls (organization_id, agent_id, call_id, duration, created_at, updated_at)
       SELECT ?, ?, 'busy-' || g, 1, timestamptz '2026-08-01' + g * interval '5 minutes', now() FROM generate_series(1, 8000) g`,
      [world.orgId, world.agentId],
    );
    await ctx.db.raw('ANALYZE calls');
    const [call] = await ctx.db('calls').orderBy('created_at').limit(1).select('id', 'agent_id', 'organization_id');
    // As CallRepository.find asks: ids are random (gen_random_uuid), so every month's index is probed.
    const { rows } = await ctx.db.raw(
      `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM calls c WHERE c.id = ? AND c.agent_id = ? AND c.organization_id = ?`,
      [call.id, call.agent_id, call.organization_id],
    );
    type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Plans?: PlanNode[] };
    const scans: PlanNode[] = [];
    const walk = (node: PlanNode) => {
      if (node['Relation Name']) scans.push(node);
      node.Plans?.forEach(walk);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    // Every month beyond a few pages is probed through its primary key; an empty or tiny one is read whole in no time.
    for (const scan of scans) {
      const { rows: count } = await ctx.db.raw(`SELECT count(*)::int AS n FROM ${scan['Relation Name']}`);
      if (count[0].n > 1000) expect(scan['Node Type'], scan['Relation Name']).toMatch(/^Index (Only )?Scan$/);
    }
    expect(scans.map((scan) => scan['Relation Name'])).toContain('calls_p2026_08');
  });

  it('gives a call an id that carries its creation time: a lookup by it plans and searches only its month', async () => {
    const world = await ctx.build.world();
    await partitions.ensure(new Date('2026-11-29T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    ctx.clock.set(new Date('2026-08-15T09:30:00.123Z'));
    const created = await ctx.http
      .post(`/v1/agents/${world.agentId}/calls`)
      .set('X-API-Key', world.key)
      .send({ call_id: 'time-id-1', duration: 5 })
      .expect(201);
    const id: string = created.body.id;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(timeOfId(id)?.toISOString()).toBe('2026-08-15T09:30:00.123Z');
    expect(created.body.created_at).toBe('2026-08-15T09:30:00.123Z');

    // The statement CallRepository.find sends, explained: one partition in the plan, not every month.
    const sent: { sql: string; bindings: unknown[] }[] = [];
    const capture = (q: { sql: string; bindings: unknown[] }) => sent.push(q);
    ctx.db.on('query', capture);
    const agent = { id: world.agentId, organization_id: world.orgId };
    try {
      expect((await new CallRepository(ctx.db).find(agent, id))?.call_id).toBe('time-id-1');
      // An id without a time (rows from before: gen_random_uuid) is looked for in every month.
      expect(await new CallRepository(ctx.db).find(agent, randomUUID())).toBeUndefined();
    } finally {
      ctx.db.removeListener('query', capture);
    }
    const relations = async (q: { sql: string; bindings: unknown[] }) => {
      const { rows } = await ctx.db.raw(
        // The driver's $1, $2, ... (in order) as knex's placeholders.
        `EXPLAIN (FORMAT JSON) ${q.sql.replace(/\$\d+/g, '?')}`,
        q.bindings as Knex.RawBinding[],
      );
      const found: string[] = [];
      const walk = (node: { 'Relation Name'?: string; Plans?: unknown[] }) => {
        if (node['Relation Name']?.startsWith('calls')) found.push(node['Relation Name']);
        (node.Plans as (typeof node)[] | undefined)?.forEach(walk);
      };
      walk(rows[0]['QUERY PLAN'][0].Plan);
      return found;
    };
    expect(await relations(sent[0]!)).toEqual(['calls_p2026_08']);
    expect((await relations(sent[1]!)).length).toBeGreaterThan(10);

    // Read, changed and read again through the API by that id.
    await ctx.http.get(`/v1/agents/${world.agentId}/calls/${id}`).set('X-API-Key', world.key).expect(200);
    const patched = await ctx.http
      .patch(`/v1/agents/${world.agentId}/calls/${id}`)
      .set('X-API-Key', world.key)
      .send({ done: true })
      .expect(200);
    expect(patched.body.done).toBe(true);
  });

  it('creates the coming months at start and moves rows written to the default partition into their month', async () => {
    const world = await ctx.build.world();
    // Far ahead of every partition: the write lands in the default partition and does not fail.
    ctx.clock.set(new Date('2031-05-17T08:00:00Z'));
    const call = await ctx.http
      .post(`/v1/agents/${world.agentId}/calls`)
      .set('X-API-Key', world.key)
      .send({ call_id: 'future-1', duration: 5 })
      .expect(201);
    const inDefault = await ctx.db.raw(`SELECT count(*)::int AS n FROM calls_default WHERE id = ?`, [call.body.id]);
    expect(inDefault.rows[0].n).toBe(1);

    const result = await partitions.ensure(new Date('2031-05-20T00:00:00Z'));
    expect(result.created).toEqual(
      expect.arrayContaining([
        'calls_p2031_05',
        'calls_p2031_06',
        'calls_p2031_07',
        'calls_p2031_08',
        'events_p2031_05',
      ]),
    );
    expect(result.movedFromDefault).toBeGreaterThanOrEqual(2);
    const moved = await ctx.db.raw(`SELECT tableoid::regclass::text AS part FROM calls WHERE id = ?`, [call.body.id]);
    expect(moved.rows[0].part).toBe('calls_p2031_05');
    // Its id still finds it in the month it moved to.
    await ctx.http.get(`/v1/agents/${world.agentId}/calls/${call.body.id}`).set('X-API-Key', world.key).expect(200);
    // Counted once: the move is not an insert for the counters.
    const stats = await ctx.http
      .get(`/v1/agents/${world.agentId}/calls?from=2031-05-01&to=2031-05-31`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(stats.body.pagination.total).toBe(1);

    // A second run (another instance at start, the schedule) finds nothing to do.
    expect(await partitions.ensure(new Date('2031-05-20T00:00:00Z'))).toEqual({ created: [], movedFromDefault: 0 });
  });

  it('drops the audit months past retention in one statement each and deletes the rest of the month row by row', async () => {
    const world = await ctx.build.world();
    await ctx.db.raw(
      `INSERT INTO audit_log (organization_id, action, method, route, resource_type, actor_type, request_id, created_at)
       SELECT ?, 'x', 'POST', '/v1/x', 'x', 'api_key', 'r', at
         FROM unnest(ARRAY['2024-01-10T00:00:00Z', '2024-02-10T00:00:00Z', '2024-03-05T00:00:00Z', '2024-03-25T00:00:00Z']::timestamptz[]) at`,
      [world.orgId],
    );
    await partitions.ensure(new Date('2024-04-01T00:00:00Z'));
    const retention = new AuditRetention(new AuditLogRepository(ctx.db), 10, ctx.clock, ctx.logger, partitions);
    // Cut-off 2024-03-15: January and February go whole, 2024-03-05 by delete, 2024-03-25 stays.
    const deleted = await retention.run(new Date('2024-03-25T00:00:00Z'));
    expect(deleted).toBe(1);
    const names = (await partitions.months('audit_log')).map((p) => p.name);
    expect(names).not.toContain('audit_log_p2024_01');
    expect(names).not.toContain('audit_log_p2024_02');
    expect(names).toContain('audit_log_p2024_03');
    const left = await ctx.db('audit_log').where({ organization_id: world.orgId }).select('created_at');
    expect(left.map((r: { created_at: Date }) => r.created_at.toISOString())).toEqual(['2024-03-25T00:00:00.000Z']);
  });
});
