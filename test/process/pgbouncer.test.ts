import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { parseConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit-store.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { Builders, type World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { TestClock } from '../support/test-clock.js';

/**
 * The app behind PgBouncer in transaction mode: requests (and the partitions' savepoints, the
 * intake's call_keys check) through the pooler, the cache listener (`DATABASE_LISTEN_URL`) and pg-boss
 * on direct session connections, as docs/scaling.md says to run it.
 */
const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
if (!PGBOUNCER) console.log('pgbouncer test skipped: pgbouncer is not installed (apt-get install pgbouncer)');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe.skipIf(!PGBOUNCER)('behind PgBouncer in transaction mode', () => {
  let ctx: TestContext;
  let dir: string;
  let bouncer: ChildProcess;
  let db: Db;
  let queue: JobQueue;
  let app: ReturnType<typeof createApp>;
  let server: ReturnType<typeof createHttpServer>;
  let http: ReturnType<typeof supertest>;
  let world: World;

  beforeAll(async () => {
    ctx = await createTestContext();
    const direct = new URL(ctx.config.DATABASE_URL!);
    const port = await freePort();
    dir = mkdtempSync(path.join(tmpdir(), 'vam-pgbouncer-'));
    writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
    // The embedded PostgreSQL asks for its password: PgBouncer logs in to it with the test's own
    // credentials (clients still reach PgBouncer without one); the machine's server trusts.
    const serverLogin = direct.password
      ? ` user=${decodeURIComponent(direct.username)} password=${decodeURIComponent(direct.password)}`
      : '';
    writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      `[databases]\n* = host=${direct.hostname} port=${direct.port || 5432}${serverLogin}\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = ${port}\n` +
        `unix_socket_dir =\nauth_type = trust\nauth_file = ${dir}/users.txt\npool_mode = transaction\n` +
        `default_pool_size = 4\nmax_client_conn = 200\nignore_startup_parameters = extra_float_digits,options,statement_timeout\n`,
    );
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
      for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), uid, gid);
    }
    const ini = path.join(dir, 'pgbouncer.ini');
    bouncer = asRoot ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER!, ini]) : spawn(PGBOUNCER!, [ini]);
    const started = Date.now();
    while (!(await listening(port))) {
      if (Date.now() - started > 10_000) throw new Error('pgbouncer did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    const pooled = `postgres://postgres@127.0.0.1:${port}${direct.pathname}`;
    const config = parseConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: pooled,
      DATABASE_LISTEN_URL: direct.toString(),
      // PgBouncer 1.18 does not carry named prepared statements between transactions.
      DATABASE_PREPARED_STATEMENTS: 'false',
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    });
    db = createDb(pooled, 8, undefined, { preparedStatements: false, pipelineConnections: 0 });
    // pg-boss keeps session state (LISTEN-free, but advisory locks in its maintenance): its own direct pool.
    queue = await JobQueue.start(direct.toString(), ctx.logger, { background: false });
    app = createApp({
      config,
      db,
      databaseUrl: pooled,
      logger: ctx.logger,
      clock: new TestClock(),
      rateLimitStore: new MemoryRateLimitStore(),
      verifyToken: createTokenVerifier(config),
      queue,
    });
    await app.container.cache.start();
    server = createHttpServer(app.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    http = supertest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    world = await new Builders(db, config, () => app.container.cache.sync()).world();
  }, 120_000);

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await app?.container.cache.stop();
    await queue?.stop();
    await db?.destroy();
    bouncer?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
    await ctx?.close();
  }, 60_000);

  it('takes calls (a repeat included), lists, counts and revokes a key at once, with the cache on', async () => {
    const calls = `/v1/agents/${world.agentId}/calls`;
    const body = { call_id: 'pb-1', customer_name: 'Erika', duration: 30 };
    await http.post(calls).set('X-API-Key', world.key).send(body).expect(201);
    await http.post(calls).set('X-API-Key', world.key).send(body).expect(200);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http
          .post(calls)
          .set('X-API-Key', world.key)
          .send({ ...body, call_id: `pb-${2 + (i % 10)}` }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(201)]);
    const list = await http.get(`${calls}?limit=5&search=Erika`).set('X-API-Key', world.key).expect(200);
    expect(list.body.pagination.total).toBe(11);
    await http
      .get(`/v1/agents/${world.agentId}/calls/stats?from=2026-01-01&to=2026-12-31&interval=month`)
      .set('X-API-Key', world.key)
      .expect(200);

    // The cache listens on its direct connection (it heard the pooled side's announcement): a
    // deleted key is refused by the next request.
    expect(app.container.cache.isListening).toBe(true);
    await http.delete(`/v1/api-keys/${world.keyId}`).set('Authorization', `Bearer ${world.token}`).expect(204);
    await http.get(calls).set('X-API-Key', world.key).expect(401);
  }, 60_000);
});
