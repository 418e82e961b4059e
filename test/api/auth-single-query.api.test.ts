import type supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { hashApiKey } from '../../src/auth/api-key-format.js';
import { encoded } from '../../src/api/entity-tag.js';
import { CredentialsRepository } from '../../src/auth/credentials.repository.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { isDatabaseUnavailable } from '../../src/db/pg-errors.js';
import { preparedSql, runPrepared } from '../../src/db/prepared.js';
import { AgentRepository } from '../../src/modules/agents/agent.repository.js';
import {
  AGENT_COLUMNS,
  AGENT_TIMESTAMP_COLUMNS,
  agentEntries,
  AgentReads,
  type AgentRow,
} from '../../src/modules/agents/agent-reads.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { checkedHttp } from '../support/contract.js';

/** The key lookups as the container wires them, with the agents module's reader. */
const credentialsOf = (db: Db) => new CredentialsRepository(db, AgentReads);

/**
 * The same database served twice: the default app (read cache on) and one with
 * READ_CACHE_ENABLED=false, where key, memberships and the path's agent come from one query.
 * Every case must answer the same on both.
 */
let ctx: TestContext;
let uncached: ReturnType<typeof supertest>;
let uncachedContainer: ReturnType<typeof createApp>['container'];
beforeAll(async () => {
  ctx = await createTestContext();
  const { app, container } = createApp({
    config: { ...ctx.config, READ_CACHE_ENABLED: false },
    db: ctx.db,
    databaseUrl: ctx.config.DATABASE_URL!,
    logger: ctx.logger,
    clock: ctx.clock,
    rateLimitStore: new MemoryRateLimitStore(),
    verifyToken: createTokenVerifier(ctx.config),
    queue: ctx.queue,
  });
  uncached = checkedHttp(app, ctx.contract);
  uncachedContainer = container;
});
afterAll(() => ctx.close());

type Answer = { status: number; body: unknown; etag: string | undefined };

async function both(path: string, key: string): Promise<[Answer, Answer]> {
  const cachedRes = await ctx.http.get(path).set('X-API-Key', key);
  const uncachedRes = await uncached.get(path).set('X-API-Key', key);
  const strip = (r: supertest.Response): Answer => {
    const body = r.body as { error?: { request_id?: string } };
    if (body.error) delete body.error.request_id;
    return { status: r.status, body, etag: r.headers.etag };
  };
  return [strip(cachedRes), strip(uncachedRes)];
}

describe('authentication without the read cache: one query for key, memberships and agent', () => {
  it('answers every case exactly as the cached path does', async () => {
    const w = await ctx.build.world();
    const other = await ctx.build.world();
    const second = await ctx.build.agent(w.orgId);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [second.id] });
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    const expired = await ctx.build.apiKey(w.orgId, w.userId, { expiresAt: new Date('2020-01-01T00:00:00Z') });
    const inactive = await ctx.build.apiKey(w.orgId, w.userId);
    await ctx.db('api_keys').where({ id: inactive.id }).update({ is_active: false });
    const orphanUser = await ctx.build.user(w.orgId, 'member');
    const orphan = await ctx.build.apiKey(w.orgId, orphanUser.id);
    await ctx.build.removeMember(orphanUser.id, w.orgId);
    await ctx.syncCaches();

    const cases: [string, string, number][] = [
      [`/v1/agents/${w.agentId}`, w.key, 200],
      [`/v1/agents/${w.agentId}/calls?limit=1`, w.key, 200],
      [`/v1/agents/${w.agentId.toUpperCase()}`, w.key, 200],
      [`/v1/agents/${other.agentId}`, w.key, 404],
      ['/v1/agents/00000000-0000-4000-8000-000000000000', w.key, 404],
      [`/v1/agents/${w.agentId}`, scoped.key, 403],
      [`/v1/agents/${second.id}`, scoped.key, 200],
      [`/v1/agents/${w.agentId}/calls`, readOnly.key, 403],
      [`/v1/agents/${w.agentId}`, readOnly.key, 200],
      [`/v1/agents/${w.agentId}`, expired.key, 401],
      [`/v1/agents/${w.agentId}`, inactive.key, 401],
      [`/v1/agents/${w.agentId}`, orphan.key, 401],
      [`/v1/agents/${w.agentId}`, `${w.key.slice(0, -4)}abcd`, 401],
      ['/v1/agents/not-a-uuid', w.key, 400],
      ['/v1/agents', w.key, 200],
    ];
    for (const [path, key, status] of cases) {
      const [cached, fresh] = await both(path, key);
      expect(fresh, `${path} (${status})`).toEqual(cached);
      expect(fresh.status, path).toBe(status);
    }
  });

  it('reads key, memberships and agent in a single query per request', async () => {
    const w = await ctx.build.world();
    const path = `/v1/agents/${w.agentId}`;
    await uncached.get(path).set('X-API-Key', w.key).expect(200); // the once-a-minute last_used_at use
    // Its batched write (and any other pending one) now, not in the middle of the counted request.
    await uncachedContainer.lastUsed.flush();
    await ctx.container.lastUsed.flush();
    const queries: string[] = [];
    const listen = (q: { sql: string }) => queries.push(q.sql);
    ctx.db.on('query', listen);
    try {
      await uncached.get(path).set('X-API-Key', w.key).expect(200);
    } finally {
      ctx.db.off('query', listen);
    }
    expect(queries).toHaveLength(1);
    expect(queries[0]).toContain('api_keys');
    expect(queries[0]).toContain('agents');
    expect(queries[0]).toContain('memberships');
  });

  it('keeps the agent read with the key to its own request, also for concurrent requests of one key', async () => {
    const w = await ctx.build.world();
    const second = await ctx.build.agent(w.orgId);
    const ids = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? w.agentId : second.id));
    const answers = await Promise.all(ids.map((id) => uncached.get(`/v1/agents/${id}`).set('X-API-Key', w.key)));
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect((answer.body as { id: string }).id).toBe(ids[i]);
    });
  });

  it('sees a change to key or agent on the very next request', async () => {
    const w = await ctx.build.world();
    const path = `/v1/agents/${w.agentId}`;
    await ctx.db('agents').where({ id: w.agentId }).update({ name: 'Renamed in SQL' });
    expect((await uncached.get(path).set('X-API-Key', w.key).expect(200)).body.name).toBe('Renamed in SQL');
    await ctx.db('memberships').where({ user_id: w.userId }).delete();
    await uncached.get(path).set('X-API-Key', w.key).expect(401);
  });
});

describe('the agent read beside the key, as one JSON value', () => {
  it('is the same AgentRow, Dates and all, as the one read column by column', async () => {
    const w = await ctx.build.world();
    await ctx
      .db('agents')
      .where({ id: w.agentId })
      .update({
        vacation_mode: true,
        vacation_end: new Date('2031-02-03T04:05:06.789Z'),
        workflow: JSON.stringify({ version: 1, steps: [{ id: 'a', name: 'Ä "quoted"' }] }),
        workflow_updated_at: new Date('2030-01-01T00:00:00.001Z'),
        metadata: JSON.stringify({ nested: { n: 1.5, list: [1, 'x', null] } }),
        stt_keywords: ['Hallo', 'Grüße'],
        llm_temperature: 0.7,
        speaking_rate: 1.1,
        greeting_variants: JSON.stringify(['Guten Tag', 'Moin']),
        // Microseconds, which the driver's Dates and toISOString cut to milliseconds.
        created_at: ctx.db.raw(`'2026-01-02T03:04:05.678901Z'::timestamptz`),
      });
    const byColumns = await new AgentRepository(ctx.db).findAnyById(w.agentId);
    const found = await credentialsOf(ctx.db).findApiKeyWithAgent(hashApiKey(w.key), w.agentId);
    expect(found?.agent).toEqual(byColumns);
    expect(found?.agent?.created_at).toBeInstanceOf(Date);
    expect(Object.keys(found!.agent!)).toEqual(Object.keys(byColumns!));
    // The representation read with it (built by PostgreSQL) is the one built from the columns, and
    // the one a cache entry keeps, byte for byte; so are the bytes a cache entry sends.
    const representation = JSON.stringify(AgentReads.representation(found!.agent!));
    expect(representation).toBe(JSON.stringify(AgentReads.representation(byColumns!)));
    const entry = await agentEntries(new AgentRepository(ctx.db)).findEntry(w.agentId);
    const shared = AgentReads.representation(entry!);
    expect(AgentReads.representation(entry!)).toBe(shared);
    expect(JSON.stringify(shared)).toBe(representation);
    expect(String(encoded(shared).body)).toBe(representation);
    expect(representation).toContain('"created_at":"2026-01-02T03:04:05.678Z"');
    expect(representation).toContain('"vacation_end":"2031-02-03T04:05:06.789Z"');
  });

  it('turns back every timestamp column of agents into a Date', async () => {
    const { rows } = await ctx.db.raw<{ rows: { column_name: string }[] }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'agents' AND data_type LIKE 'timestamp%'`,
    );
    const timestamps = rows.map((r) => r.column_name).filter((c) => (AGENT_COLUMNS as string[]).includes(c));
    expect([...AGENT_TIMESTAMP_COLUMNS].sort()).toEqual(timestamps.sort());
  });
});

describe('the uncached key lookups as prepared statements', () => {
  /** The statements prepared on `db`'s connection (a pool of one). */
  async function preparedNames(db: Db): Promise<string[]> {
    const { rows } = await db.raw<{ rows: { name: string }[] }>(
      'SELECT name FROM pg_prepared_statements ORDER BY name',
    );
    return rows.map((r) => r.name);
  }

  /**
   * `work` with the key lookups on a pool of one connection of their own (not pipelined, so that
   * the statements are on the connection `preparedNames` looks at), closed afterwards.
   */
  async function onOneConnection(
    work: (db: Db, credentials: CredentialsRepository<AgentRow>) => Promise<void>,
    options: { preparedStatements?: boolean } = {},
  ): Promise<void> {
    const db = createDb(ctx.config.DATABASE_URL!, 1, undefined, { pipelineConnections: 0, ...options });
    try {
      await work(db, credentialsOf(db));
    } finally {
      await db.destroy();
    }
  }

  it('prepares them once per connection, and a migration adding an agent column does not break them', async () => {
    const w = await ctx.build.world();
    const hash = hashApiKey(w.key);
    await onOneConnection(async (db, credentials) => {
      await credentials.findApiKeyWithAgent(hash, w.agentId);
      await credentials.findApiKeyWithAgent(hash, w.agentId);
      await credentials.findApiKeyByHash(hash);
      expect(await preparedNames(db)).toEqual([
        expect.stringMatching(/^api_key_[0-9a-f]{12}$/),
        expect.stringMatching(/^api_key_with_agent_/),
      ]);
      // A running instance during a rolling deploy: the table changes under its prepared statement.
      await ctx.db.raw('ALTER TABLE agents ADD COLUMN prepared_probe text');
      try {
        const found = await credentials.findApiKeyWithAgent(hash, w.agentId);
        expect(found?.agent?.id).toBe(w.agentId);
        expect(found?.key.creator_roles).toEqual({ [w.orgId]: 'developer_admin' });
        expect((await credentials.findApiKeyByHash(hash))?.created_by).toBe(w.userId);
      } finally {
        await ctx.db.raw('ALTER TABLE agents DROP COLUMN prepared_probe');
      }
      expect((await credentials.findApiKeyWithAgent(hash, w.agentId))?.agent?.name).toBeTruthy();
    });
  });

  it('are not broken by a migration that changes the type of a column they read (their values are JSON)', async () => {
    const w = await ctx.build.world();
    const hash = hashApiKey(w.key);
    await onOneConnection(async (db, credentials) => {
      await credentials.findApiKeyWithAgent(hash, w.agentId);
      const before = await preparedNames(db);
      await ctx.db.raw('ALTER TABLE api_keys ALTER COLUMN rate_limit_per_hour TYPE bigint');
      await ctx.db.raw('ALTER TABLE agents ALTER COLUMN retention_days TYPE bigint');
      try {
        const found = await credentials.findApiKeyWithAgent(hash, w.agentId);
        expect(found?.agent?.id).toBe(w.agentId);
        expect(found?.key.rate_limit_per_hour).toEqual(expect.any(Number));
        expect(await preparedNames(db)).toEqual(before);
      } finally {
        await ctx.db.raw('ALTER TABLE api_keys ALTER COLUMN rate_limit_per_hour TYPE integer');
        await ctx.db.raw('ALTER TABLE agents ALTER COLUMN retention_days TYPE integer');
      }
    });
  });

  it('recovers when a migration changes the result type of a statement, on a connection that prepared it', async () => {
    const probe = preparedSql('probe', 'SELECT p.n FROM prepared_probe p LIMIT 1');
    await ctx.db.raw('CREATE TABLE prepared_probe (n integer)');
    await ctx.db('prepared_probe').insert({ n: 7 });
    try {
      await onOneConnection(async (db) => {
        expect((await runPrepared(db, probe, [])).rows).toEqual([{ n: 7 }]);
        // PostgreSQL refuses the old statement from now on: "cached plan must not change result type".
        await ctx.db.raw('ALTER TABLE prepared_probe ALTER COLUMN n TYPE bigint');
        await expect(db.raw(`EXECUTE "${(await preparedNames(db))[0]}"`)).rejects.toThrow(
          /cached plan must not change result type/,
        );
        for (let i = 0; i < 3; i++) expect((await runPrepared(db, probe, [])).rows).toEqual([{ n: 7 }]);
        // Prepared again once, under a new name; the later calls use it without a failed attempt first.
        expect(await preparedNames(db)).toEqual([
          expect.stringMatching(/^probe_[0-9a-f]{12}$/),
          expect.stringMatching(/^probe_[0-9a-f]{12}_1$/),
        ]);
      });
    } finally {
      await ctx.db.raw('DROP TABLE prepared_probe');
    }
  });

  it('runs them unnamed with DATABASE_PREPARED_STATEMENTS=false, for a pooler that cannot carry them', async () => {
    const w = await ctx.build.world();
    await onOneConnection(
      async (db, credentials) => {
        const found = await credentials.findApiKeyWithAgent(hashApiKey(w.key), w.agentId);
        expect(await preparedNames(db)).toEqual([]);
        expect(found?.agent?.id).toBe(w.agentId);
      },
      { preparedStatements: false },
    );
  });
});

describe('the key lookups pipelined on a connection of their own', () => {
  /** A database whose connections PostgreSQL shows under `name`: a pool of one and one pipelined. */
  function named(name: string): Db {
    const url = new URL(ctx.config.DATABASE_URL!);
    url.searchParams.set('application_name', name);
    return createDb(url.toString(), 1, undefined, { pipelineConnections: 1 });
  }

  async function backendsOf(name: string): Promise<number[]> {
    const { rows } = await ctx.db.raw<{ rows: { pid: number }[] }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = ? ORDER BY pid',
      [name],
    );
    return rows.map((r) => r.pid);
  }

  it('answer many at once on one connection, also while every pool connection is taken', async () => {
    const w = await ctx.build.world();
    const other = await ctx.build.world();
    const name = `vam-pipelined-${Math.random().toString(36).slice(2, 8)}`;
    const db = named(name);
    const credentials = credentialsOf(db);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    // The pool's only connection, held by a transaction until the lookups are done.
    const holder = db.transaction(async (trx) => {
      await trx.raw('SELECT 1');
      holding();
      await released;
    });
    try {
      await held;
      const lookups = Array.from({ length: 60 }, (_, i) => {
        const subject = i % 2 === 0 ? w : other;
        return credentials.findApiKeyWithAgent(hashApiKey(subject.key), subject.agentId).then((found) => ({
          subject,
          found,
        }));
      });
      for (const { subject, found } of await Promise.all(lookups)) {
        expect(found?.key.created_by).toBe(subject.userId);
        expect(found?.agent?.id).toBe(subject.agentId);
      }
      // The transaction's connection and the pipelined one: nothing else was opened.
      expect(await backendsOf(name)).toHaveLength(2);
    } finally {
      release();
      await holder;
      await db.destroy();
    }
    await expect.poll(() => backendsOf(name)).toEqual([]);
  });

  it('replace a connection that PostgreSQL ended: the lookups in flight fail as "unavailable", the next one works', async () => {
    const w = await ctx.build.world();
    const name = `vam-pipelined-${Math.random().toString(36).slice(2, 8)}`;
    const db = named(name);
    const credentials = credentialsOf(db);
    const hash = hashApiKey(w.key);
    try {
      await credentials.findApiKeyByHash(hash);
      const [pid] = await backendsOf(name);
      await ctx.db.raw('SELECT pg_terminate_backend(?)', [pid]);
      const during = await credentials.findApiKeyByHash(hash).then(
        (found) => found?.id,
        (error: unknown) => (isDatabaseUnavailable(error) ? 'unavailable' : error),
      );
      // Either the termination arrived first (and the lookup failed as unavailable) or the lookup
      // already went to a new connection.
      expect([w.keyId, 'unavailable']).toContain(during);
      await expect
        .poll(async () => (await credentials.findApiKeyByHash(hash).catch(() => undefined))?.id)
        .toBe(w.keyId);
      const [replacement] = await backendsOf(name);
      expect(replacement).not.toBe(pid);
    } finally {
      await db.destroy();
    }
  });
});
