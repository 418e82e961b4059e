import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { createDb } from '../../src/db/knex.js';
import { createAdminDb, databaseUrl } from '../support/database-url.js';
import {
  buildDist,
  createServerDatabase,
  freePort,
  killLeftovers,
  logLines,
  repoRoot,
  spawnServer,
  waitUntilListening,
  type ServerProcess,
} from '../support/server-process.js';

/**
 * Each way a start can be misconfigured ends with one line on stderr naming the cause and the fix,
 * exit code 1, and no stack (unless LOG_LEVEL=debug). The servers run as child processes
 * (`node dist/main.js`, built into a temporary directory), all at once.
 */

const holders: net.Server[] = [];
const drops: (() => Promise<void>)[] = [];
const tempDirs: string[] = [];
const adminUrl = () => inject('adminUrl');

/** Something else listening on 127.0.0.1:`port` for the whole file. */
async function holdPort(): Promise<number> {
  const holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
  holders.push(holder);
  return (holder.address() as net.AddressInfo).port;
}

/**
 * A PostgreSQL wire-protocol stand-in that asks for a password and refuses it as PostgreSQL does
 * (28P01); the test run's own PostgreSQL may trust every local connection, which never refuses one.
 */
async function passwordRefusingPostgres(): Promise<number> {
  const message = (type: string, body: Buffer) => {
    const head = Buffer.alloc(5);
    head.write(type, 0);
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const field = (code: string, value: string) => Buffer.from(`${code}${value}\0`);
  const server = net.createServer((socket) => {
    let startup = true;
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      if (startup) {
        startup = false;
        const cleartext = Buffer.alloc(4);
        cleartext.writeInt32BE(3);
        socket.write(message('R', cleartext)); // AuthenticationCleartextPassword
        return;
      }
      if (chunk[0] !== 'p'.charCodeAt(0)) return;
      const error = Buffer.concat([
        field('S', 'FATAL'),
        field('V', 'FATAL'),
        field('C', '28P01'),
        field('M', 'password authentication failed for user "postgres"'),
        Buffer.from('\0'),
      ]);
      socket.end(message('E', error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  holders.push(server);
  return (server.address() as net.AddressInfo).port;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vam-setup-'));
  chmodSync(dir, 0o755); // reachable by the postgres user: no shared copy of the embedded database
  tempDirs.push(dir);
  return dir;
}

let buildDir: string;

/** `node dist/main.js` (the production build: half the CPU of tsx while nine start at once). */
function start(env: Record<string, string | undefined>): ServerProcess {
  return spawnServer(process.execPath, ['dist/main.js'], { env: { LOG_LEVEL: 'info', ...env }, cwd: buildDir });
}

let emptyDatabase: string;

beforeAll(async () => {
  buildDir = await buildDist();
  tempDirs.push(buildDir);
  // A database with no tables: a start that stops at a taken PORT must not have migrated it.
  emptyDatabase = `vam_setup_${Math.random().toString(16).slice(2, 10)}`;
  const admin = createAdminDb(adminUrl());
  await admin.raw(`CREATE DATABASE "${emptyDatabase}"`);
  await admin.destroy();
});

afterAll(async () => {
  killLeftovers();
  await Promise.all(drops.map((drop) => drop()));
  for (const holder of holders) holder.close();
  const admin = createAdminDb(adminUrl());
  await admin.raw(`DROP DATABASE IF EXISTS "${emptyDatabase}" WITH (FORCE)`);
  await admin.destroy();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

async function tableCount(database: string): Promise<number> {
  const db = createDb(databaseUrl(adminUrl(), database), 1);
  const { rows } = await db.raw(
    `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
  );
  await db.destroy();
  return (rows as { n: number }[])[0]!.n;
}

type Case = {
  name: string;
  env: () => Promise<Record<string, string | undefined>>;
  /** What the line must say: the cause, then the fix. */
  line: RegExp;
};

const cases: Case[] = [
  {
    name: 'PostgreSQL refuses the connection',
    env: async () => ({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/voice` }),
    line: /PostgreSQL at 127\.0\.0\.1:\d+ refused the connection: start PostgreSQL .*DATABASE_URL/,
  },
  {
    name: 'PostgreSQL refuses the password',
    env: async () => ({
      DATABASE_URL: `postgres://postgres:wrong-password@127.0.0.1:${await passwordRefusingPostgres()}/voice`,
    }),
    line: /refused the password of user "postgres": fix the password in DATABASE_URL/,
  },
  {
    name: 'the database closes the connection without a word',
    env: async () => ({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await holdPort()}/voice` }),
    line: /the server at 127\.0\.0\.1:\d+ accepted the connection and closed it without answering as PostgreSQL: if PostgreSQL is still starting .*fix the host and port/,
  },
  {
    name: 'the database does not exist',
    env: async () => ({ DATABASE_URL: databaseUrl(adminUrl(), 'vam_no_such_database') }),
    line: /database "vam_no_such_database" does not exist on .*: create it .*or fix the database name in DATABASE_URL/,
  },
  {
    name: 'the role does not exist',
    env: async () => {
      const url = new URL(adminUrl());
      url.username = 'vam_no_such_role';
      return { DATABASE_URL: url.toString() };
    },
    // A server that checks passwords (the embedded one) does not say whether a role exists.
    line: /role "vam_no_such_role" does not exist on .*: create it .*or fix the user name in DATABASE_URL|refused the password of user "vam_no_such_role": fix the password in DATABASE_URL/,
  },
  {
    name: 'JWT_SECRET is too short in production',
    env: async () => ({ NODE_ENV: 'production', JWT_SECRET: 'short', DATABASE_URL: adminUrl() }),
    line: /JWT_SECRET.*32.*: set JWT_SECRET to a random value of at least 32 characters/,
  },
  {
    name: 'PORT is in use',
    env: async () => ({ PORT: String(await holdPort()), DATABASE_URL: databaseUrl(adminUrl(), emptyDatabase) }),
    line: /PORT \d+ is already in use on 127\.0\.0\.1: stop the program .* or set PORT to a free port/,
  },
  {
    name: 'PORT is in use, embedded database',
    env: async () => ({
      PORT: String(await holdPort()),
      DATABASE_URL: undefined,
      DATA_DIR: tempDir(),
      EMBEDDED_PG_PORT: String(await freePort()),
    }),
    line: /PORT \d+ is already in use/,
  },
  {
    name: 'EMBEDDED_PG_PORT is in use',
    env: async () => ({ DATABASE_URL: undefined, DATA_DIR: tempDir(), EMBEDDED_PG_PORT: String(await holdPort()) }),
    line: /EMBEDDED_PG_PORT \d+ is already in use on 127\.0\.0\.1: stop the program .* or set EMBEDDED_PG_PORT to a free port/,
  },
];

describe.concurrent('a start that cannot succeed', () => {
  it.for(cases)(
    '$name: one line with the cause and the fix, exit 1, no stack',
    { timeout: 90_000 },
    async (c, { expect }) => {
      const env = await c.env();
      const server = start(env);
      const { code } = await server.exited;

      const lines = server.stderr().trim().split('\n');
      expect(lines, server.output()).toHaveLength(1);
      expect(lines[0]).toMatch(/^Failed to start: /);
      expect(lines[0]).toMatch(c.line);
      expect(code).toBe(1);
      expect(server.output()).not.toMatch(/(^|\\n)\s+at /m); // neither on stderr nor in a log line
      // The line is the only report: no warning or error from the database driver besides it.
      expect(
        logLines(server).filter((line) => (line.level ?? 0) >= 40),
        server.output(),
      ).toEqual([]);
      // Nothing was started on the way: no credentials printed, no cluster created.
      expect(server.stdout()).not.toContain('First start');
      if (env.DATA_DIR && c.name.startsWith('PORT')) expect(existsSync(path.join(env.DATA_DIR, 'pg'))).toBe(false);
      if (c.name === 'PORT is in use') expect(await tableCount(emptyDatabase)).toBe(0); // no migration ran
    },
  );
});

describe('Redis refuses the connection', () => {
  it('starts degraded: one warning line with the cause and the fix, no stack, and serves', async ({ expect }) => {
    const database = await createServerDatabase();
    drops.push(database.drop);
    const server = start({ DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    const { port } = await waitUntilListening(server);
    const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
    expect(health.status).toBe(200);
    const warnings = logLines(server).filter((line) => line.level === 40);
    expect(warnings.map((line) => line.msg)).toEqual([
      expect.stringMatching(/^Redis at 127\.0\.0\.1:\d+ is unreachable at start \(.*\): .*check REDIS_URL/),
    ]);
    expect(server.stderr()).toBe('');
    expect(server.output()).not.toMatch(/(^|\\n)\s+at /m);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  }, 90_000);
});

describe('a start on a DATABASE_URL without organizations, TRUST_PROXY=true in production', () => {
  it('creates nothing, logs how to bootstrap, and warns once about TRUST_PROXY', async ({ expect }) => {
    const database = await createServerDatabase();
    drops.push(database.drop);
    // SECRETS_KEY set: production without it warns too (SIP credentials refused), which is not this test's subject.
    const server = start({
      NODE_ENV: 'production',
      TRUST_PROXY: 'true',
      DATABASE_URL: database.url,
      SECRETS_KEY: 'ab'.repeat(32),
    });
    await waitUntilListening(server);
    const lines = logLines(server);
    expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
      expect.stringMatching(/^TRUST_PROXY=true trusts X-Forwarded-For from any peer: .*addresses or CIDRs/),
    ]);
    expect(lines.map((line) => line.msg)).toContainEqual(
      expect.stringMatching(/^no organization yet: `npm run cli -- bootstrap` creates one/),
    );
    expect(server.stdout()).not.toContain('First start');
    const db = createDb(database.url, 1);
    expect(Number((await db('organizations').count({ n: '*' }).first())!.n)).toBe(0);
    await db.destroy();
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  }, 90_000);
});

describe('npm run cli in a second shell', () => {
  it("joins the running server's embedded PostgreSQL on its port, whatever EMBEDDED_PG_PORT it has", async ({
    expect,
  }) => {
    const dataDir = tempDir();
    const server = start({ DATABASE_URL: undefined, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) });
    await waitUntilListening(server, 120_000);
    const cli = spawnServer(process.execPath, ['dist/cli.js', 'credentials'], {
      env: { DATABASE_URL: undefined, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) },
      cwd: buildDir,
    });
    const { code } = await cli.exited;
    expect(cli.stderr()).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(cli.stdout())).toMatchObject({ organization: { name: 'Demo Organization' } });
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  }, 180_000);
});

describe('LOG_LEVEL=debug', () => {
  it('prints the stack after the line', async ({ expect }) => {
    const server = start({
      LOG_LEVEL: 'debug',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/voice`,
    });
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.stderr()).toMatch(/^Failed to start: PostgreSQL at .* refused the connection/);
    expect(server.stderr()).toMatch(/^\s+at /m);
  }, 90_000);
});

describe('npm run cli -- --help', () => {
  it('prints every command, and docs/operations.md lists each of them', async ({ expect }) => {
    const cli = spawnServer('npm', ['run', '--silent', 'cli', '--', '--help']);
    const { code } = await cli.exited;
    expect(code, cli.output()).toBe(0);
    const commands = [...cli.stdout().matchAll(/^ {2}([a-z][a-z:]*)/gm)].map((m) => m[1]!);
    expect(commands).toEqual(expect.arrayContaining(['migrate', 'bootstrap', 'credentials', 'key:create']));
    const operations = readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
    for (const command of commands) expect(operations, command).toContain(`\`${command}`);
  }, 60_000);
});
