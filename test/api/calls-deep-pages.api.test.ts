import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { DEEP_OFFSET } from '../../src/modules/calls/call.repository.js';
import { timeId } from '../../src/db/time-ids.js';

/**
 * Numbered pages from DEEP_OFFSET on are found through the call counters instead of by walking the
 * index: they must hold exactly the calls, order and totals of the list sorted here from the rows.
 */
let ctx: TestContext;
let world: World;
beforeAll(async () => {
  ctx = await createTestContext();
  world = await ctx.build.world();
});
afterAll(() => ctx.close());

const DENSE = 13_500;
const SPARSE = 6_000;
/** Newest call; three calls share each instant (the id orders them). */
const BASE = Date.parse('2026-05-01T09:17:12.345Z');

type Row = { id: string; at: number; done: boolean; deleted: boolean };
type ListBody = {
  data: { id: string }[];
  pagination: { page: number | null; limit: number; total: number; pages: number; next_cursor: string | null };
};

/**
 * DENSE calls 20 s apart by threes (one day and a bit, across the end of April), then SPARSE calls
 * 20 min apart back into February: deep pages fall in a day of thousands of calls and in months of
 * few. Every fourth is done, every ninth trashed.
 */
async function seed(): Promise<void> {
  const rows = Array.from({ length: DENSE + SPARSE }, (_, i) => {
    const at = new Date(
      i < DENSE ? BASE - Math.floor(i / 3) * 20_000 : BASE - (DENSE / 3) * 20_000 - (i - DENSE) * 1_200_000,
    );
    return {
      id: timeId(at),
      organization_id: world.orgId,
      agent_id: world.agentId,
      call_id: `deep-${i}`,
      duration: 30,
      done: i % 4 === 0,
      created_at: at,
      updated_at: at,
      deleted_at: i % 9 === 4 ? new Date(BASE) : null,
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await ctx.db('calls').insert(rows.slice(i, i + 1000));
}

async function list(query: string): Promise<ListBody> {
  const res = await ctx.http.get(`/v1/agents/${world.agentId}/calls?${query}`).set('X-API-Key', world.key).expect(200);
  return res.body as ListBody;
}

/** The agent's calls as stored now, newest first (ties by id, as PostgreSQL orders uuids). */
async function stored(): Promise<Row[]> {
  const rows: { id: string; created_at: Date; done: boolean; deleted_at: Date | null }[] = await ctx
    .db('calls')
    .where({ agent_id: world.agentId })
    .select('id', 'created_at', 'done', 'deleted_at');
  return rows
    .map((r) => ({ id: r.id, at: r.created_at.getTime(), done: r.done, deleted: r.deleted_at !== null }))
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
}

type Case = { query: string; keep: (r: Row) => boolean };
const within = (from: string, to: string) => (r: Row) => r.at >= Date.parse(from) && r.at <= Date.parse(to);
const live = (r: Row) => !r.deleted;
const CASES: Case[] = [
  { query: '', keep: live },
  { query: 'done=false', keep: (r) => live(r) && !r.done },
  { query: 'include_deleted=true', keep: () => true },
  { query: 'include_deleted=true&done=false', keep: (r) => !r.done },
  // Partial hours and days at both edges, whole days between, across the month.
  {
    query: 'from=2026-03-03T10:20:30.123Z&to=2026-05-01T07:45:10Z',
    keep: (r) => live(r) && within('2026-03-03T10:20:30.123Z', '2026-05-01T07:45:10Z')(r),
  },
  {
    query: 'from=2026-03-01&to=2026-04-30&include_deleted=true',
    keep: within('2026-03-01T00:00:00Z', '2026-04-30T23:59:59.999Z'),
  },
  // Open below; `to` one millisecond past a whole hour.
  { query: 'to=2026-05-01T06:00:00Z', keep: (r) => live(r) && r.at <= Date.parse('2026-05-01T06:00:00Z') },
  // Open above, from inside an hour.
  { query: 'from=2026-02-25T23:30:00Z', keep: (r) => live(r) && r.at >= Date.parse('2026-02-25T23:30:00Z') },
  // No whole day inside: the hours alone.
  {
    query: 'from=2026-04-30T08:40:00Z&to=2026-05-01T09:10:00Z',
    keep: (r) => live(r) && within('2026-04-30T08:40:00Z', '2026-05-01T09:10:00Z')(r),
  },
];

/** Pages of `limit` from the first deep one to one past the last, a few between. */
function deepPages(total: number, limit: number): number[] {
  const first = Math.ceil(DEEP_OFFSET / limit) + 1;
  const last = Math.ceil(total / limit);
  const pages = new Set([first - 1, first, first + 1, Math.floor((first + last) / 2), last - 1, last, last + 1]);
  return [...pages].filter((p) => p >= 1).sort((a, b) => a - b);
}

async function expectPages(rows: Row[], { query, keep }: Case, limits: number[]): Promise<void> {
  const expected = rows.filter(keep).map((r) => r.id);
  expect(expected.length, query).toBeGreaterThan(DEEP_OFFSET + 100);
  for (const limit of limits) {
    for (const page of deepPages(expected.length, limit)) {
      const body = await list(`${query}&limit=${limit}&page=${page}`);
      const at = `${query} limit=${limit} page=${page}`;
      expect(
        body.data.map((c) => c.id),
        at,
      ).toEqual(expected.slice((page - 1) * limit, page * limit));
      expect(body.pagination.total, at).toBe(expected.length);
      expect(body.pagination.pages, at).toBe(Math.ceil(expected.length / limit));
    }
  }
}

describe('deep numbered pages', () => {
  beforeAll(seed, 120_000);

  it('are found through the counters, not by walking the index', async () => {
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    ctx.db.on('query', listen);
    try {
      await list(`limit=20&page=${DEEP_OFFSET / 20 + 1}`);
      await list(`limit=20&page=${DEEP_OFFSET / 20}`);
    } finally {
      ctx.db.off('query', listen);
    }
    const pages = statements.filter((sql) => sql.includes('"page"'));
    expect(pages.map((sql) => sql.includes('"cut"'))).toEqual([true, false]);
  });

  it('hold the calls, order and total of the plain list with every filter the counters split', async () => {
    const rows = await stored();
    for (const [i, c] of CASES.entries()) await expectPages(rows, c, i === 0 ? [20, 100, 7] : [100]);
  }, 120_000);

  it('follow calls marked done, trashed and removed since', async () => {
    let rows = await stored();
    // Done through the API; trashed and removed straight in the table, inside the deep pages.
    for (const row of rows.filter(live).slice(DEEP_OFFSET, DEEP_OFFSET + 3)) {
      await ctx.http
        .patch(`/v1/agents/${world.agentId}/calls/${row.id}`)
        .set('X-API-Key', world.key)
        .send({ done: true })
        .expect(200);
    }
    const later = rows.filter(live).slice(DEEP_OFFSET + 50, DEEP_OFFSET + 60);
    await ctx
      .db('calls')
      .whereIn(
        'id',
        later.slice(0, 5).map((r) => r.id),
      )
      .update({ deleted_at: new Date() });
    await ctx
      .db('calls')
      .whereIn(
        'id',
        later.slice(5).map((r) => r.id),
      )
      .delete();
    rows = await stored();
    for (const c of CASES.slice(0, 4)) await expectPages(rows, c, [20]);
  }, 120_000);

  it('continue by cursor where the numbered page ends', async () => {
    const page = DEEP_OFFSET / 20 + 7;
    const numbered = await list(`limit=20&page=${page}`);
    const next = await list(`limit=20&page=${page + 1}`);
    const byCursor = await list(`limit=20&cursor=${numbered.pagination.next_cursor}`);
    expect(byCursor.data.map((c) => c.id)).toEqual(next.data.map((c) => c.id));
  });
});
