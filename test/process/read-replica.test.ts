import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import supertest from 'supertest';
import { register } from 'tsx/esm/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { parseConfig } from '../../src/config.js';
import { createDb, migrationConfig, type Db } from '../../src/db/knex.js';
import type { Statements } from '../../src/db/replicas.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Builders, type World } from '../support/builders.js';
import { TestClock } from '../support/test-clock.js';

/**
 * A real streaming standby: a primary of its own (initdb in a temporary directory on a free port:
 * the machine's cluster is left as it is), `pg_basebackup -R` of it, the standby started on another
 * free port, and the app reading calls lists, statistics and exports from it. The standby is paused
 * (lag), stopped and promoted while a client keeps listing: no answer is a 5xx, the replica leaves
 * the rotation within 2 s of each and comes back when it is healthy again. A second instance of the
 * app on the same primary and standby shows read-your-writes across instances.
 */
const BIN = ['18', '17', '16', '15', '14']
  .map((v) => `/usr/lib/postgresql/${v}/bin`)
  .find((dir) => ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'].every((b) => existsSync(path.join(dir, b))));
if (!BIN) console.log('read-replica test skipped: no PostgreSQL binaries under /usr/lib/postgresql/*/bin');

const asRoot = process.getuid?.() === 0;
function pgUserIds(): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  };
}

/** A PostgreSQL binary, as the postgres user when this runs as root (PostgreSQL refuses root). */
function pg(binary: string, args: string[]): string {
  const file = path.join(BIN!, binary);
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  return execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 }).toString();
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - started;
}

describe.skipIf(!BIN)('read replicas (a real streaming standby)', () => {
  let dir: string;
  let primaryPort: number;
  let standbyPort: number;
  let db: Db;
  let standbyDb: Db;
  let queue: JobQueue;
  let app: ReturnType<typeof createApp>;
  let http: ReturnType<typeof supertest>;
  let server: ReturnType<typeof createHttpServer>;
  /** The second instance: its own pool, cache listener, replica checks and HTTP server. */
  let db2: Db;
  let app2: ReturnType<typeof createApp>;
  let http2: ReturnType<typeof supertest>;
  let server2: ReturnType<typeof createHttpServer>;
  let build: Builders;
  let world: World;
  let reader: World;
  const statuses: number[] = [];

  const standbyDir = () => path.join(dir, 'standby');
  const conf = (data: string, port: number) =>
    appendFileSync(
      path.join(data, 'postgresql.conf'),
      `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nwal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nwal_receiver_status_interval = 1\n`,
    );
  const start = (data: string) => pg('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', 'start']);
  const stop = (data: string) => pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  const replica = () => app.container.reads.status()[0]!;
  const list = async (as: World) => {
    const res = await http.get(`/v1/agents/${world.agentId}/calls?limit=1`).set('X-API-Key', as.key);
    statuses.push(res.status);
    return res;
  };
  let n = 0;
  const report = async () => {
    const res = await http
      .post(`/v1/agents/${world.agentId}/calls`)
      .set('X-API-Key', world.key)
      .send({ call_id: `r-${++n}`, duration: 3 });
    statuses.push(res.status);
    expect(res.status).toBe(201);
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vam-replica-'));
    if (asRoot) {
      const { uid, gid } = pgUserIds();
      chownSync(dir, uid, gid);
    }
    [primaryPort, standbyPort] = [await freePort(), await freePort()];
    const primary = path.join(dir, 'primary');
    pg('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync']);
    conf(primary, primaryPort);
    start(primary);
    const url = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    db = createDb(url, 8);
    const unregister = register();
    await db.migrate.latest(migrationConfig);
    await unregister();
    await JobQueue.install(url, pino({ level: 'silent' }));

    pg('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standbyDir(),
      '-R',
      '-X',
      'stream',
    ]);
    conf(standbyDir(), standbyPort);
    start(standbyDir());
    const standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`;
    standbyDb = createDb(standbyUrl, 2);

    const config = parseConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: url,
      DATABASE_REPLICA_URLS: standbyUrl,
      REPLICA_MAX_LAG_MS: '2000',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    });
    const logger = pino({ level: 'silent' });
    queue = await JobQueue.start(url, logger, { background: false });
    app = createApp({
      config,
      db,
      databaseUrl: url,
      logger,
      clock: new TestClock(),
      rateLimitStore: new MemoryRateLimitStore(),
      verifyToken: createTokenVerifier(config),
      queue,
    });
    await app.container.cache.start();
    await app.container.reads.start();
    server = createHttpServer(app.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    http = supertest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    db2 = createDb(url, 8);
    app2 = createApp({
      config,
      db: db2,
      databaseUrl: url,
      logger,
      clock: new TestClock(),
      rateLimitStore: new MemoryRateLimitStore(),
      verifyToken: createTokenVerifier(config),
      queue,
    });
    await app2.container.cache.start();
    await app2.container.reads.start();
    server2 = createHttpServer(app2.app);
    await new Promise<void>((resolve) => server2.listen(0, '127.0.0.1', resolve));
    http2 = supertest(`http://127.0.0.1:${(server2.address() as AddressInfo).port}`);
    build = new Builders(db, config, () => app.container.cache.sync());
    world = await build.world();
    // A second key of the same organization that never writes: its lists go to the replica.
    const readerKey = await build.apiKey(world.orgId, world.userId, {
      rateLimitPerMinute: 100_000,
      rateLimitPerHour: 1_000_000,
    });
    reader = { ...world, key: readerKey.key, keyId: readerKey.id };
  }, 300_000);

  afterAll(async () => {
    for (const s of [server, server2]) {
      s?.closeAllConnections();
      await new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
    }
    await app2?.container.reads.stop();
    await app2?.container.cache.stop();
    await db2?.destroy();
    await app?.container.reads.stop();
    await app?.container.cache.stop();
    await queue?.stop();
    await standbyDb?.destroy();
    await db?.destroy();
    for (const data of [standbyDir(), path.join(dir, 'primary')]) {
      try {
        if (existsSync(path.join(data, 'postmaster.pid'))) stop(data);
      } catch {
        // already stopped
      }
    }
    if (dir && readdirSync(dir)) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves exports from the standby, and a write through one instance sends its caller to the primary on the other', async () => {
    const agentId = await build.freshAgent(world.orgId, 'Export agent');
    const calls = `/v1/agents/${agentId}/calls`;
    let n2 = 0;
    const write = async () => {
      const res = await http
        .post(calls)
        .set('X-API-Key', world.key)
        .send({ call_id: `x-${++n2}`, duration: 3 });
      expect(res.status).toBe(201);
    };
    const totalOn = async (on: Db) => Number((await on('calls').where({ agent_id: agentId }).count({ n: '*' }))[0]!.n);
    const inRotation = () =>
      [app, app2].every((a) => a.container.reads.status()[0]!.healthy) && app2.container.cache.hearing();
    for (let i = 0; i < 3; i++) await write();

    // Replay paused, one more call written through instance A: the standby lacks it while it is still
    // in the rotation (for up to the lag bound). A round counts only if both instances had the standby
    // in the rotation, and B heard the channel, from before the write to after the reads; on a slow
    // machine the standby may leave first, and the round is repeated.
    let rounds = 0;
    for (;;) {
      rounds += 1;
      await until('the standby in the rotation of both instances', async () => inRotation(), 30_000);
      await until('the standby to replay the calls', async () => (await totalOn(standbyDb)) === n2, 10_000);
      await standbyDb.raw('SELECT pg_wal_replay_pause()');
      await write();
      const onStandby = await totalOn(standbyDb);
      const onPrimary = await totalOn(db);
      const audit = (on: Db) => on('audit_log').where({ organization_id: world.orgId }).count({ n: '*' });
      const auditOnStandby = Number((await audit(standbyDb))[0]!.n);
      const auditOnPrimary = Number((await audit(db))[0]!.n);
      // The writer's list on instance B: the primary (B heard of the write on the shared channel).
      const writerOnB = await http2.get(`${calls}?limit=1`).set('X-API-Key', world.key);
      // Another key on B: the standby's older state.
      const readerOnB = await http2.get(`${calls}?limit=1`).set('X-API-Key', reader.key);
      // Its audit log list on B: the standby (the write's audit entry is not there yet).
      const auditOnB = await http2
        .get(`/v1/organization/${world.orgId}/audit-log?limit=1`)
        .set('X-API-Key', reader.key);
      // The export of that other key on A: from the standby too.
      const exported = await http.get(`${calls}/export`).set('X-API-Key', reader.key);
      const conclusive = inRotation();
      await standbyDb.raw('SELECT pg_wal_replay_resume()');
      for (const res of [writerOnB, readerOnB, auditOnB, exported]) statuses.push(res.status);
      expect(auditOnB.status).toBe(200);
      expect(writerOnB.status).toBe(200);
      expect(writerOnB.body.pagination.total).toBe(onPrimary);
      expect(exported.status).toBe(200);
      if (conclusive) {
        expect(onStandby).toBe(onPrimary - 1);
        expect(readerOnB.body.pagination.total).toBe(onStandby);
        expect(auditOnStandby).toBe(auditOnPrimary - 1);
        expect(auditOnB.body.pagination.total).toBe(auditOnStandby);
        expect(exported.text.trim().split('\n')).toHaveLength(onStandby);
        break;
      }
      expect(rounds, 'the standby left the rotation before every round ended (machine too slow?)').toBeLessThan(5);
    }

    // Replayed: the export has every call again (the standby back in the rotation).
    await until('the standby to replay the last call', async () => (await totalOn(standbyDb)) === n2, 10_000);
    await until('the standby back in the rotation', async () => inRotation(), 30_000);
    const all = await http.get(`${calls}/export`).set('X-API-Key', reader.key);
    expect(all.text.trim().split('\n')).toHaveLength(n2);
    console.log(`read replica: export from the standby and read-your-writes across instances shown in round ${rounds}`);
  }, 180_000);

  it('reads lists from the standby, a writer from the primary, and drops a lagging, stopped or promoted standby within 2 s', async () => {
    await until('the standby to join the rotation', () => replica().healthy, 30_000);
    for (let i = 0; i < 3; i++) await report();
    await until(
      'the standby to replay the calls',
      async () => (await list(reader)).body.pagination?.total === 3,
      10_000,
    );

    // Replay paused: the standby falls behind. The writer reads its own write at once (primary); the
    // other key, while the standby is still within the lag bound, reads the standby's older state.
    await standbyDb.raw('SELECT pg_wal_replay_pause()');
    const wrote = Date.now();
    await report();
    expect((await list(world)).body.pagination.total).toBe(4);
    const stale = await list(reader);
    const staleChecked = Date.now() - wrote < 1500;
    if (staleChecked) expect(stale.body.pagination.total).toBe(3);
    const dropped = await until('the lagging standby to leave the rotation', () => !replica().healthy, 6_000);
    expect(Date.now() - wrote).toBeLessThan(2000 + 2000);
    expect(replica().reason).toMatch(/lag/);
    expect((await list(reader)).body.pagination.total).toBe(4);
    await standbyDb.raw('SELECT pg_wal_replay_resume()');
    await until('the caught-up standby to come back', () => replica().healthy, 10_000);
    expect(dropped).toBeLessThan(4000);

    // A read of several statements (an export's batches) that began on the standby goes on on the
    // primary when the standby goes away between two of them.
    const standbyNow = (on: Statements) =>
      on(async (conn) => (await conn.raw('SELECT pg_is_in_recovery() AS r')).rows[0].r as boolean);
    const batches = app.container.reads.statements(undefined);
    expect(await standbyNow(batches)).toBe(true);

    // Stopped while a client keeps listing: every answer 200, out of the rotation within 2 s.
    let listing = true;
    const loop = (async () => {
      while (listing) await list(reader);
    })();
    stop(standbyDir());
    expect(await standbyNow(batches)).toBe(false);
    const down = await until('the stopped standby to leave the rotation', () => !replica().healthy, 5_000);
    expect(down).toBeLessThan(2000);
    start(standbyDir());
    await until('the restarted standby to come back', () => replica().healthy, 30_000);

    // Promoted (no longer a standby: it would miss the primary's writes from now on).
    pg('pg_ctl', ['-D', standbyDir(), '-w', 'promote']);
    const promoted = await until('the promoted standby to leave the rotation', () => !replica().healthy, 5_000);
    expect(promoted).toBeLessThan(2000);
    expect(replica().reason).toMatch(/not a standby/);
    listing = false;
    await loop;

    expect((await list(reader)).body.pagination.total).toBe(4);
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    console.log(
      `read replica: lagging dropped after ${dropped} ms, stopped after ${down} ms, promoted after ${promoted} ms; ` +
        `${statuses.length} requests, none 5xx; stale replica read ${staleChecked ? 'seen' : 'not checked (slow machine)'}`,
    );
  }, 180_000);
});
