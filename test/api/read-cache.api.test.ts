import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CredentialsRepository } from '../../src/auth/credentials.repository.js';
import { poolNotify, ReadCache } from '../../src/cache/read-cache.js';
import { agentEntries, type AgentRow } from '../../src/modules/agents/agent-reads.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { TcpProxy } from '../support/tcp-proxy.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** What the container gives the cache: a NOTIFY through the request pool (ctx exists from beforeAll on). */
const notifyThroughPool = (payload: string) => poolNotify(ctx.db)(payload);

/** A cache over a loader the test controls (its rows made entries as the container does), listening on the test database. */
async function cacheWith(load: (id: string) => Promise<AgentRow | undefined>) {
  const cache = new ReadCache(
    {} as CredentialsRepository,
    agentEntries({ findAnyById: load }),
    ctx.config.DATABASE_URL!,
    notifyThroughPool,
    ctx.clock,
    pino({ level: 'silent' }),
  );
  await cache.start();
  return cache;
}

// eslint-disable-next-line no-restricted-syntax -- a partial row: the cache only reads these columns
const row = (version: number) => ({ id: 'a', organization_id: 'o', version }) as unknown as AgentRow;

describe('ReadCache', () => {
  it('serves a row from memory until a change is announced', async () => {
    let loads = 0;
    const cache = await cacheWith(async () => row(++loads));
    expect(await cache.findAgent('a')).toMatchObject({ version: 1 });
    expect(await cache.findAgent('a')).toMatchObject({ version: 1 });
    await ctx.db.raw(`SELECT pg_notify('vam_cache', 'agents')`);
    await cache.sync();
    expect(await cache.findAgent('a')).toMatchObject({ version: 2 });
    await cache.stop();
  });

  it('does not store a row whose read was under way when the cache was dropped', async () => {
    const pending = deferred<AgentRow>();
    let loads = 0;
    const cache = await cacheWith(async () => (++loads === 1 ? pending.promise : row(loads)));
    const first = cache.findAgent('a');
    cache.clear(); // a change was announced while the first read was in flight
    pending.resolve(row(1));
    expect(await first).toMatchObject({ version: 1 });
    expect(await cache.findAgent('a')).toMatchObject({ version: 2 });
    await cache.stop();
  });

  it('reads the database every time while it is not listening', async () => {
    let loads = 0;
    const cache = new ReadCache(
      {} as CredentialsRepository,
      { findEntry: async () => row(++loads) },
      ctx.config.DATABASE_URL!,
      notifyThroughPool,
      ctx.clock,
      pino({ level: 'silent' }),
    );
    await cache.findAgent('a');
    await cache.findAgent('a');
    expect(loads).toBe(2);
  });

  it('is no longer waited for by the other instances once it has stopped', async () => {
    const [a, b] = [await cacheWith(async () => row(1)), await cacheWith(async () => row(1))];
    await b.stop();
    // Without the goodbye, b would count as a live peer for two leases and cost this round a lease
    // without acknowledging; the file's own app instance does acknowledge.
    const round = await a.peers.awaitPeers();
    expect(round.acknowledged).toBe(round.peers);
    await a.stop();
  });

  it('stops while its listening connection is still connecting', async () => {
    const cache = new ReadCache(
      {} as CredentialsRepository,
      { findEntry: async () => row(1) },
      ctx.config.DATABASE_URL!,
      notifyThroughPool,
      ctx.clock,
      pino({ level: 'silent' }),
    );
    const started = cache.start();
    // pg never settles connect() when the client is ended while connecting.
    await cache.stop();
    await started;
    expect(cache.isListening).toBe(false);
  });

  it("drops a region on its tables' announcements alone, and with the whole cache on any other", async () => {
    let agentLoads = 0;
    let regionLoads = 0;
    const cache = await cacheWith(async () => row(++agentLoads));
    const region = cache.region<number>(['tools']);
    const read = () => region.read('x', async () => ++regionLoads);
    // A round of the peers comes back after every announcement committed before it (commit order).
    const announce = async (table: string) => {
      await ctx.db.raw(`SELECT pg_notify('vam_cache', ?)`, [table]);
      await cache.peers.awaitPeers();
    };
    await cache.findAgent('a');
    expect([await read(), await read()]).toEqual([1, 1]);
    await announce('tools');
    expect(await cache.findAgent('a')).toMatchObject({ version: 1 });
    expect(await read()).toBe(2);
    await announce('agents');
    expect(await cache.findAgent('a')).toMatchObject({ version: 2 });
    expect(await read()).toBe(3);
    await cache.stop();
  });

  it('hands out frozen rows, since every request shares them', async () => {
    const cache = await cacheWith(async () => row(1));
    const agent = await cache.findAgent('a');
    expect(Object.isFrozen(agent)).toBe(true);
    await cache.stop();
  });
});

describe('agent rows changed elsewhere', () => {
  it('serves the new configuration once a plain-SQL change is announced', async () => {
    const w = await ctx.build.world();
    const get = () => ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key);
    expect((await get().expect(200)).body.name).toBe('Main Agent');
    await ctx.db('agents').where({ id: w.agentId }).update({ name: 'Renamed elsewhere' });
    await expect.poll(async () => (await get()).body.name, { timeout: 2000, interval: 5 }).toBe('Renamed elsewhere');
  });

  it('answers a PATCH and the very next GET with the new configuration', async () => {
    const w = await ctx.build.world();
    await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200);
    await ctx.http.patch(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).send({ name: 'Patched' }).expect(200);
    expect((await ctx.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key).expect(200)).body.name).toBe(
      'Patched',
    );
  });
});

describe('with READ_CACHE_ENABLED=false', () => {
  it('reads key and agent from the database on every request', async () => {
    const off = await createTestContext({ config: { READ_CACHE_ENABLED: 'false' } });
    try {
      const w = await off.build.world();
      const get = () => off.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key);
      await get().expect(200);
      await off.db('agents').where({ id: w.agentId }).update({ name: 'Changed in SQL' });
      expect((await get().expect(200)).body.name).toBe('Changed in SQL');
      await off.db('api_keys').where({ id: w.keyId }).update({ is_active: false });
      expect((await get().expect(401)).body.error.message).toBe('API key is inactive');
    } finally {
      await off.close();
    }
  });

  it('bounds the agents it keeps by their text size: past 20 million characters it starts over', async () => {
    const prompt = 'x'.repeat(6_000_000);
    const loads: string[] = [];
    const cache = await cacheWith(async (id) => {
      loads.push(id);
      // eslint-disable-next-line no-restricted-syntax -- a partial row: the cache only weighs it
      return { id, organization_id: 'o', prompt } as unknown as AgentRow;
    });
    for (const id of ['a', 'b', 'c', 'a', 'b', 'c']) await cache.findAgent(id);
    expect(loads).toEqual(['a', 'b', 'c']); // 18 million characters: all kept
    await cache.findAgent('d'); // 24 million: the others are dropped, d is kept
    await cache.findAgent('d');
    await cache.findAgent('a');
    expect(loads).toEqual(['a', 'b', 'c', 'd', 'a']);
    await cache.stop();
  });
});

describe('with DATABASE_LISTEN_URL (for DATABASE_URL a pooler in transaction mode)', () => {
  it('listens there, serves from memory and applies every change announced; bypasses the cache while that path is cut', async () => {
    const direct = new URL(ctx.config.DATABASE_URL!);
    const proxy = await TcpProxy.start(direct.hostname, Number(direct.port || 5432));
    const name = `vam-listen-${randomBytes(3).toString('hex')}`;
    const other = await createTestContext({ config: (url) => ({ DATABASE_LISTEN_URL: proxy.urlFor(url, name) }) });
    try {
      expect(other.container.cache.isListening).toBe(true);
      const { rows } = await other.db.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ?`,
        [`${name}/cache-listener`],
      );
      expect(rows[0].n).toBe(1);

      const w = await other.build.world();
      const get = () => other.http.get(`/v1/agents/${w.agentId}`).set('X-API-Key', w.key);
      await other.syncCaches(); // the world's own announcements are behind us
      await get().expect(200);
      // A change with its announcement suppressed is not seen: the agent comes from memory.
      await other.db.transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        await trx('agents').where({ id: w.agentId }).update({ name: 'Unannounced' });
      });
      expect((await get().expect(200)).body.name).toBe('Main Agent');
      // An announced one arrives over the listening path (the entries would live another minute).
      await other.db('api_keys').where({ id: w.keyId }).update({ is_active: false });
      await expect.poll(async () => (await get()).status, { timeout: 2000, interval: 5 }).toBe(401);

      proxy.cut();
      await expect.poll(() => other.container.cache.isListening, { timeout: 5000, interval: 5 }).toBe(false);
      await other.db('api_keys').where({ id: w.keyId }).update({ is_active: true });
      expect((await get().expect(200)).body.name).toBe('Unannounced');
      proxy.restore();
      await expect.poll(() => other.container.cache.isListening, { timeout: 5000, interval: 5 }).toBe(true);
    } finally {
      await other.close();
      await proxy.close();
    }
  });

  it('keeps the cache off, says why, and tries again only after a longer wait, when it reaches another database', async () => {
    const admin = new URL(inject('adminUrl'));
    const proxy = await TcpProxy.start(admin.hostname, Number(admin.port || 5432));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    let loads = 0;
    const cache = new ReadCache(
      {} as CredentialsRepository,
      { findEntry: async () => row(++loads) },
      proxy.urlFor(inject('adminUrl')),
      notifyThroughPool,
      ctx.clock,
      pino({ level: 'warn' }, sink),
      true,
      { confirmMs: 200, maxDelayMs: 10, mismatchDelayMs: 300 },
    );
    try {
      await cache.start();
      expect(cache.isListening).toBe(false);
      await cache.findAgent('a');
      await cache.findAgent('a');
      expect(loads).toBe(2);
      await expect
        .poll(() => lines.join(''), { interval: 5 })
        .toContain('it must reach the same database directly or through a session-mode pool');
      const failedAt = performance.now();
      expect(proxy.accepted).toBe(1);
      // A lost connection would be tried again after 10 ms; a mismatch, a setting, after 300.
      await expect.poll(() => proxy.accepted, { interval: 5 }).toBe(2);
      expect(performance.now() - failedAt).toBeGreaterThanOrEqual(250);
    } finally {
      await cache.stop();
      await proxy.close();
    }
  });
});
