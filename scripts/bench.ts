/**
 * npm run bench: GET /v1/agents/{agentId} with an API key through the whole product chain (key
 * check, rate limit, scope check, agent read) next to a baseline Express handler doing one
 * primary-key read of the same agent, on the same PostgreSQL, in the same run.
 *
 * The product runs twice: as configured by default (read cache on: keys and agents served from
 * memory, dropped on every change PostgreSQL announces) and with READ_CACHE_ENABLED=false (the
 * key and the agent read from the database on every request: one round trip more than the
 * baseline). All servers are child processes; autocannon runs here. DATABASE_URL is used when
 * set, otherwise an embedded PostgreSQL under .data/bench.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';
import express from 'express';
import { pino } from 'pino';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { createDb, migrationConfig } from '../src/db/knex.js';
import { OpsRepository } from '../src/ops/ops.repository.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const PRODUCT_PORT = 3901;
const BASELINE_PORT = 3902;
const UNCACHED_PORT = 3903;

async function baselineServer(): Promise<void> {
  const db = createDb(process.env.DATABASE_URL!, 10);
  const app = express();
  app.get('/v1/agents/:agentId', async (req, res) => {
    const agent = await db('agents').where({ id: req.params.agentId }).first();
    if (!agent) res.status(404).end();
    else res.json(agent);
  });
  app.listen(BASELINE_PORT, '127.0.0.1', () => process.stdout.write('ready\n'));
}

function startChild(args: string[], env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined);
        if (res) return resolve(child);
      } catch {
        // not listening yet: poll again
      }
      if (Date.now() > deadline) return reject(new Error(`server on ${port} did not start`));
      setTimeout(poll, 200);
    };
    child.on('exit', (code) => reject(new Error(`child exited with ${code}`)));
    void poll();
  });
}

type Summary = { rps: number; p50: number; p99: number };

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Requests per second over all rounds; latency percentiles as the median of the rounds. */
function summarize(runs: autocannon.Result[]): Summary {
  const requests = runs.reduce((n, r) => n + r.requests.total, 0);
  const seconds = runs.reduce((n, r) => n + r.duration, 0);
  return {
    rps: requests / seconds,
    p50: median(runs.map((r) => r.latency.p50)),
    p99: median(runs.map((r) => r.latency.p99)),
  };
}

function ratios(name: string, r: Summary, base: Summary): string {
  const f = (x: number) => x.toFixed(2);
  return `${name}: req/s ratio ${f(r.rps / base.rps)} (target >= 0.80), p50 ratio ${f(base.p50 / Math.max(r.p50, 0.001))}, p99 ratio ${f(base.p99 / Math.max(r.p99, 0.001))} (baseline/product)`;
}

function load(url: string, headers: Record<string, string>, duration: number) {
  return autocannon({ url, headers, connections: CONNECTIONS, duration, pipelining: 1 });
}

async function main(): Promise<void> {
  const config = parseConfig({
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? './.data/bench',
    EMBEDDED_PG_PORT: '54330',
  });
  const database = await openDatabase(config, pino({ level: 'warn' }));
  await database.db.migrate.latest(migrationConfig);
  const ops = new OpsRepository(database.db);
  const org = await ops.createOrganization('Bench');
  const user = await ops.createUser(`bench-${Date.now()}@example.com`, 'Bench');
  await ops.addMember(user.id, org.id, 'developer_admin');
  const agent = await ops.createAgent(org.id, {
    name: 'Bench Agent',
    phone_number: `+4930${Date.now() % 1e9}`,
    prompt: 'x'.repeat(2000),
  });
  // Limits far above what the run sends, so the limiter is exercised but never refuses.
  const key = await ops.createApiKey({
    organizationId: org.id,
    userId: user.id,
    rateLimitPerMinute: 2_000_000_000,
    rateLimitPerHour: 2_000_000_000,
  });

  const env = {
    DATABASE_URL: database.url,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    WORKERS_ENABLED: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const children = [
    await startChild(['src/main.ts'], { ...env, PORT: String(PRODUCT_PORT) }, PRODUCT_PORT),
    await startChild(
      ['src/main.ts'],
      { ...env, PORT: String(UNCACHED_PORT), READ_CACHE_ENABLED: 'false', WORKERS_ENABLED: 'false' },
      UNCACHED_PORT,
    ),
    await startChild(['scripts/bench.ts', '--baseline'], env, BASELINE_PORT),
  ];
  try {
    const keyHeader = { 'X-API-Key': key.key };
    const targets = [
      {
        url: `http://127.0.0.1:${PRODUCT_PORT}/v1/agents/${agent.id}`,
        headers: keyHeader,
        runs: [] as autocannon.Result[],
      },
      {
        url: `http://127.0.0.1:${UNCACHED_PORT}/v1/agents/${agent.id}`,
        headers: keyHeader,
        runs: [] as autocannon.Result[],
      },
      { url: `http://127.0.0.1:${BASELINE_PORT}/v1/agents/${agent.id}`, headers: {}, runs: [] as autocannon.Result[] },
    ];
    for (const t of targets) {
      const check = await fetch(t.url, { headers: t.headers });
      if (check.status !== 200) throw new Error(`${t.url} answered ${check.status}`);
      await load(t.url, t.headers, 3); // warm up
    }
    // Alternate short rounds so that a busy moment on the machine hits all alike.
    for (let round = 0; round < ROUNDS; round++)
      for (const t of targets) t.runs.push(await load(t.url, t.headers, DURATION));
    const failures = targets.flatMap((t) => t.runs).reduce((n, r) => n + r.non2xx + r.errors, 0);
    if (failures > 0) throw new Error(`${failures} failed or non-2xx answers`);
    const [p, u, b] = targets.map((t) => summarize(t.runs)) as [Summary, Summary, Summary];
    const row = (name: string, r: Summary) =>
      `${name.padEnd(26)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}`;
    process.stdout.write(
      [
        `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
        `database: ${config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}; ${CONNECTIONS} connections; ${ROUNDS} alternating rounds of ${DURATION} s each`,
        '',
        `${'server'.padEnd(26)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}`,
        row('product (default config)', p),
        row('product (read cache off)', u),
        row('baseline (one PK read)', b),
        '',
        ratios('product', p, b),
        ratios('product, read cache off', u, b),
        '',
      ].join('\n'),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await database.close();
  }
}

if (process.argv.includes('--baseline')) void baselineServer();
else
  main().catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
