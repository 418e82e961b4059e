import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { CallSchema } from '../../src/modules/calls/call.schemas.js';
import { CallPageSchema } from '../../src/modules/calls/call.openapi.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

const calls = (agentId: string) => `/v1/agents/${agentId}/calls`;
type ListBody = {
  data: { id: string; created_at: string; [f: string]: unknown }[];
  pagination: { page: number | null; limit: number; total: number; pages: number; next_cursor: string | null };
};

async function report(world: World, at: string, fields: Record<string, unknown> = {}): Promise<string> {
  ctx.clock.set(at);
  const res = await ctx.http
    .post(calls(world.agentId))
    .set('X-API-Key', world.key)
    .send({ call_id: `c-${Math.random().toString(36).slice(2)}`, duration: 30, ...fields })
    .expect(201);
  expectSchema(res, CallSchema);
  return res.body.id as string;
}

async function list(world: World, query: string): Promise<ListBody> {
  const res = await ctx.http
    .get(`${calls(world.agentId)}?${query}`)
    .set('X-API-Key', world.key)
    .expect(200);
  expectSchema(res, CallPageSchema);
  return res.body as ListBody;
}

/** Follows next_cursor from `cursor=` to the end; returns the ids in the order seen. */
async function walk(world: World, query: string, between?: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor = '';
  for (let i = 0; i < 100; i++) {
    const page = await list(world, `${query}&cursor=${cursor}`);
    expect(page.pagination.page).toBeNull();
    seen.push(...page.data.map((c) => c.id));
    if (page.pagination.next_cursor === null) return seen;
    cursor = page.pagination.next_cursor;
    await between?.();
  }
  throw new Error('cursor did not end');
}

async function pageThrough(world: World, query: string): Promise<string[]> {
  const seen: string[] = [];
  for (let page = 1; ; page++) {
    const body = await list(world, `${query}&page=${page}`);
    seen.push(...body.data.map((c) => c.id));
    if (page >= body.pagination.pages) return seen;
  }
}

describe('keyset paging of calls (cursor)', () => {
  let world: World;
  beforeAll(async () => {
    world = await ctx.build.world();
    // Three calls share one instant: the id decides their order, and no page boundary loses one.
    for (const at of ['2026-05-01T08:00:00Z', '2026-05-01T09:00:00Z', '2026-05-02T10:00:00Z']) {
      await report(world, at);
      await report(world, at, { done: true });
      await report(world, at);
    }
  });

  it('returns every call once, in the same order as page paging, and ends with next_cursor null', async () => {
    for (const limit of [1, 2, 4, 9, 20]) {
      const byPage = await pageThrough(world, `limit=${limit}`);
      expect(byPage).toHaveLength(9);
      expect(await walk(world, `limit=${limit}`)).toEqual(byPage);
    }
  });

  it('applies the filters to every page', async () => {
    const done = await walk(world, 'limit=2&done=true');
    expect(done).toEqual(await pageThrough(world, 'limit=2&done=true'));
    expect(done).toHaveLength(3);
  });

  it('neither repeats nor skips a call when calls are reported between two pages', async () => {
    const before = await pageThrough(world, 'limit=20');
    let n = 0;
    const seen = await walk(world, 'limit=2', async () => {
      await report(world, `2026-06-0${++n}T12:00:00Z`);
    });
    expect(seen).toEqual(before);
  });

  it('reports the exact total in cursor mode too, and hands a cursor to continue from a numbered page', async () => {
    const first = await list(world, 'limit=4&page=1');
    expect(first.pagination).toMatchObject({ page: 1, limit: 4 });
    expect(first.pagination.next_cursor).toEqual(expect.any(String));
    const rest = await list(world, `limit=4&cursor=${first.pagination.next_cursor}`);
    const second = await list(world, 'limit=4&page=2');
    expect(rest.data.map((c) => c.id)).toEqual(second.data.map((c) => c.id));
    expect(rest.pagination.total).toBe(first.pagination.total);
  });

  it('answers 400 naming cursor when page is given too, or when the cursor was not handed out by the API', async () => {
    const first = await list(world, 'limit=2&cursor=');
    for (const query of [
      `cursor=${first.pagination.next_cursor}&page=1`,
      'cursor=&page=2',
      'cursor=not-a-cursor',
      `cursor=${Buffer.from('2026-01-01T00:00:00.000000Z|x').toString('base64url')}`,
      `cursor=${'A'.repeat(300)}`,
      'cursor=a&cursor=b',
    ]) {
      const res = await ctx.http
        .get(`${calls(world.agentId)}?${query}`)
        .set('X-API-Key', world.key)
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('cursor');
    }
  });
});

describe('what a list reads', () => {
  it('leaves transcript, recording and score unread: GET one call has them', async () => {
    const world = await ctx.build.world();
    const transcript = [{ role: 'user', text: 'x'.repeat(5000) }];
    const id = await report(world, '2026-05-03T08:00:00Z', { transcript, audio_file_url: 'https://example.com/a.mp3' });
    const queries: string[] = [];
    const listen = (q: { sql: string }) => queries.push(q.sql);
    ctx.db.on('query', listen);
    let body: ListBody;
    try {
      body = await list(world, 'limit=5');
    } finally {
      ctx.db.off('query', listen);
    }
    expect(body.data.map((c) => c.id)).toEqual([id]);
    expect(body.data[0]).not.toHaveProperty('transcript');
    const page = queries.find((sql) => sql.includes('"page"'));
    expect(page).toBeDefined();
    expect(page).not.toMatch(/transcript|audio_file_url|final_score/);
    const one = await ctx.http
      .get(`${calls(world.agentId)}/${id}`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(one.body.transcript).toBe(JSON.stringify(transcript));
    expect(one.body.audio_file_url).toBe('https://example.com/a.mp3');
  });
});

describe('exact totals', () => {
  let world: World;
  const reported: { id: string; at: string; done: boolean }[] = [];
  beforeAll(async () => {
    world = await ctx.build.world();
    const times = [
      '2026-03-01T00:00:00Z',
      '2026-03-01T23:59:59.999Z',
      '2026-03-02T06:00:00Z',
      '2026-03-02T18:00:00Z',
      '2026-03-03T12:00:00Z',
      '2026-03-05T00:00:00.001Z',
      '2026-03-07T08:00:00Z',
    ];
    for (const [i, at] of times.entries()) {
      const done = i % 2 === 0;
      reported.push({ id: await report(world, at, { done }), at, done });
    }
  });

  const expectTotal = async (query: string, filter: (c: { at: string; done: boolean; id: string }) => boolean) => {
    const body = await list(world, `limit=1&${query}`);
    expect(body.pagination.total, query).toBe(reported.filter(filter).length);
    expect(body.pagination.pages, query).toBe(reported.filter(filter).length);
  };
  const within = (from: string, to: string) => (c: { at: string }) =>
    Date.parse(c.at) >= Date.parse(from) && Date.parse(c.at) <= Date.parse(to);

  it('counts whole days, partial days at the edges and ranges inside one day alike', async () => {
    await expectTotal('', () => true);
    await expectTotal('from=2026-03-02&to=2026-03-03', within('2026-03-02T00:00:00Z', '2026-03-03T23:59:59.999Z'));
    await expectTotal(
      'from=2026-03-01T12:00:00Z&to=2026-03-05T00:00:00.001Z',
      within('2026-03-01T12:00:00Z', '2026-03-05T00:00:00.001Z'),
    );
    await expectTotal(
      'from=2026-03-02T07:00:00Z&to=2026-03-02T19:00:00Z',
      within('2026-03-02T07:00:00Z', '2026-03-02T19:00:00Z'),
    );
    await expectTotal('from=2026-03-03T00:00:01Z', within('2026-03-03T00:00:01Z', '2100-01-01T00:00:00Z'));
    await expectTotal('to=2026-03-01T23:59:59.998Z', within('2000-01-01T00:00:00Z', '2026-03-01T23:59:59.998Z'));
    await expectTotal('done=true&from=2026-03-01T00:00:00.001Z', (c) => c.done && c.at !== '2026-03-01T00:00:00Z');
  });

  it('follows done changes, the trash and deletions', async () => {
    const target = reported[1]!;
    await ctx.http
      .patch(`${calls(world.agentId)}/${target.id}`)
      .set('X-API-Key', world.key)
      .send({ done: true });
    target.done = true;
    await expectTotal('done=true', (c) => c.done);
    await expectTotal('done=false', (c) => !c.done);

    const trashed = reported[4]!;
    await ctx.db('calls').where({ id: trashed.id }).update({ deleted_at: new Date() });
    await expectTotal('', (c) => c.id !== trashed.id);
    await expectTotal('include_deleted=true', () => true);
    await expectTotal('include_deleted=true&done=true', (c) => c.done);

    const removed = reported.pop()!;
    await ctx.db('calls').where({ id: removed.id }).delete();
    await expectTotal('include_deleted=true', () => true);
  });

  it('keeps the counters of other agents when an agent with calls is deleted', async () => {
    const other = await ctx.build.world();
    await report(other, '2026-03-02T10:00:00Z');
    await ctx.http.delete(`/v1/agents/${other.agentId}`).set('Authorization', `Bearer ${other.token}`).expect(204);
    expect(await ctx.db('call_day_counts').where({ agent_id: other.agentId })).toEqual([]);
    await expectTotal('include_deleted=true', () => true);
  });
});

describe('search', () => {
  it('matches each field and the transcript, but never text that spans two fields', async () => {
    const world = await ctx.build.world();
    const id = await report(world, '2026-04-01T10:00:00Z', {
      customer_name: 'Erika Mustermann',
      customer_request: 'Heizung ausgefallen',
      transcript: [{ role: 'user', text: 'Der Kessel pfeift' }],
    });
    const found = async (text: string) =>
      (await list(world, `search=${encodeURIComponent(text)}`)).data.map((c) => c.id);
    expect(await found('MUSTERMANN')).toEqual([id]);
    expect(await found('kessel pf')).toEqual([id]);
    expect(await found('Mustermann Heizung')).toEqual([]);
    expect(await found('pfeift')).toEqual([id]);
    expect((await list(world, 'search=kessel')).pagination.total).toBe(1);
  });

  it('pages its matches by number and by cursor in list order, with the exact total, beside other filters', async () => {
    const world = await ctx.build.world();
    const matching: { id: string; done: boolean; at: string }[] = [];
    for (let i = 0; i < 9; i++) {
      const at = `2026-05-0${1 + (i % 3)}T0${i}:00:00Z`;
      const done = i % 2 === 0;
      matching.push({ id: await report(world, at, { customer_name: `Kunde ${i} Zebulon`, done }), done, at });
      await report(world, at, { customer_name: `Kunde ${i} Other` });
    }
    const newestFirst = (rows: typeof matching) =>
      [...rows].sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id)).map((r) => r.id);
    expect(await pageThrough(world, 'search=zebulon&limit=2')).toEqual(newestFirst(matching));
    expect(await walk(world, 'search=zebulon&limit=2')).toEqual(newestFirst(matching));
    const second = await list(world, 'search=zebulon&limit=4&page=2');
    expect(second.pagination).toMatchObject({ page: 2, limit: 4, total: 9, pages: 3 });
    const done = matching.filter((r) => r.done);
    expect(await walk(world, 'search=zebulon&done=true&limit=2')).toEqual(newestFirst(done));
    const inRange = matching.filter((r) => r.at < '2026-05-03');
    const ranged = await list(world, 'search=zebulon&from=2026-05-01&to=2026-05-02');
    expect(ranged.data.map((c) => c.id)).toEqual(newestFirst(inRange));
    expect(ranged.pagination.total).toBe(inRange.length);
    expect((await list(world, 'search=zebulon&limit=4&page=4')).pagination).toMatchObject({ total: 9, pages: 3 });
  });
});
