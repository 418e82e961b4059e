import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { cloneTemplate } from './context.js';
import { createAdminDb, databaseUrl } from './database-url.js';

/** The repository's root, where `npm start` runs. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The production build (`npm run build`'s layout: dist/, dist/migrations/) in a new temporary
 * directory beside a copy of package.json and a link to node_modules, for `npm run start:prod` and
 * `node dist/main.js`. esbuild, file by file (0.3 s); the repository's own dist/ is left alone.
 * The caller removes the directory.
 */
export async function buildDist(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vam-dist-'));
  const esbuild = path.join(repoRoot, 'node_modules/.bin/esbuild');
  const sources = (root: string) =>
    readdirSync(path.join(repoRoot, root), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => path.join(repoRoot, root, file));
  const common = ['--platform=node', '--format=esm', '--target=node20', '--log-level=warning'];
  await promisify(execFile)(esbuild, [
    ...sources('src'),
    `--outdir=${dir}/dist`,
    `--outbase=${repoRoot}/src`,
    ...common,
  ]);
  await promisify(execFile)(esbuild, [...sources('migrations'), `--outdir=${dir}/dist/migrations`, ...common]);
  copyFileSync(path.join(repoRoot, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/** A database of its own for one spawned server, cloned from the migrated template. */
export async function createServerDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('adminUrl');
  const template = inject('templateDatabase');
  const name = `${template.replace('vam_tpl_', 'vam_t_')}_${randomBytes(4).toString('hex')}`;
  const admin = createAdminDb(adminUrl);
  await cloneTemplate(admin, name, template);
  return {
    url: databaseUrl(adminUrl, name),
    async drop() {
      await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

export type ServerProcess = {
  child: ChildProcess;
  /** The pid of the process spawned (npm's own for `npm start`). */
  pid: number;
  stdout: () => string;
  stderr: () => string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

const children = new Set<ChildProcess>();
/** Node processes found behind the spawned ones (npm's children), killed too if left behind. */
const serverPids = new Set<number>();
/** Process groups of detached servers (with their embedded PostgreSQL), killed as a whole. */
const groups = new Set<number>();

/**
 * Spawns `command` with the environment of a test server (over `process.env`, without the test
 * run's LOG_LEVEL) and collects what it writes.
 */
export function spawnServer(
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; detached?: boolean } = {},
): ServerProcess {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    ...options.env,
  };
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  children.add(child);
  if (options.detached) groups.add(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => stdout + stderr,
    exited,
  };
}

/** The JSON log lines a server wrote on stdout. */
export function logLines(server: ServerProcess): { msg?: string; level?: number; pid?: number; port?: number }[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: string; level?: number; pid?: number; port?: number }];
      } catch {
        return [];
      }
    });
}

/** Polls `condition` every 20 ms until it holds; throws after `timeout` ms (or when `condition` throws). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeout: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for the "listening on" line; gives the node process's pid and the port it listens on. */
export async function waitUntilListening(
  server: ServerProcess,
  timeout = 60_000,
): Promise<{ nodePid: number; port: number }> {
  let exited = false;
  void server.exited.then(() => (exited = true));
  const listening = () => logLines(server).find((line) => line.msg?.startsWith('listening on'));
  await waitFor(
    () => {
      if (exited && !listening()) throw new Error(`server exited before listening:\n${server.output()}`);
      return listening() !== undefined;
    },
    timeout,
    'the server to listen',
  );
  const line = listening()!;
  serverPids.add(line.pid!);
  return { nodePid: line.pid!, port: line.port! };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Ports for a child process to listen on later, below Linux's ephemeral range (32768-60999): the
 * kernel hands out ports from that range to every `listen(0)` (odd ones first) and to outgoing
 * connections (even ones first), so a port from it, free when asked, can be given to another
 * listener of the suite by the time the child binds it. Below that range only another pick of this
 * function can collide. A child that can choose its own port (`PORT=0`, `EMBEDDED_PG_PORT=0`) should.
 */
const LISTEN_PORTS = { from: 20_000, to: 32_767 };

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nobody listens on right now, outside the range the kernel hands out itself. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LISTEN_PORTS.from + Math.floor(Math.random() * (LISTEN_PORTS.to - LISTEN_PORTS.from + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${LISTEN_PORTS.from} and ${LISTEN_PORTS.to}`);
}

/** Kills (SIGKILL) every server this file spawned that is still running, and its node; for afterAll. */
export function killLeftovers(): void {
  const pids = [...[...groups].map((pid) => -pid), ...[...children].map((child) => child.pid), ...serverPids];
  for (const pid of pids) {
    try {
      if (pid) process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
