/**
 * npm run bench: GET /v1/agents/{agentId} with an API key through the whole product chain (key
 * check, rate limit, scope check, agent read) next to a baseline Express handler doing one
 * primary-key read of the same agent, on the same PostgreSQL, in the same run.
 *
 * Both servers run as child processes; autocannon runs here. DATABASE_URL is used when set,
 * otherwise an embedded PostgreSQL under .data/bench.
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
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => undefined);
        if (res) return resolve(child);
      } catch {}
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
  return { rps: requests / seconds, p50: median(runs.map((r) => r.latency.p50)), p99: median(runs.map((r) => r.latency.p99)) };
}

function load(url: string, headers: Record<string, string>, duration: number) {
  return autocannon({ url, headers, connections: CONNECTIONS, duration, pipelining: 1 });
}

async function main(): Promise<void> {
  const config = parseConfig({ ...process.env, DATA_DIR: process.env.DATA_DIR ?? './.data/bench', EMBEDDED_PG_PORT: '54330' });
  const database = await openDatabase(config, pino({ level: 'warn' }));
  await database.db.migrate.latest(migrationConfig);
  const ops = new OpsRepository(database.db);
  const org = await ops.createOrganization('Bench');
  const user = await ops.createUser(`bench-${Date.now()}@example.com`, 'Bench');
  await ops.addMember(user.id, org.id, 'developer_admin');
  const agent = await ops.createAgent(org.id, { name: 'Bench Agent', phone_number: `+4930${Date.now() % 1e9}`, prompt: 'x'.repeat(2000) });
  // Limits far above what the run sends, so the limiter is exercised but never refuses.
  const key = await ops.createApiKey({ organizationId: org.id, userId: user.id, rateLimitPerMinute: 2_000_000_000, rateLimitPerHour: 2_000_000_000 });

  const env = { DATABASE_URL: database.url, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', WORKERS_ENABLED: 'true', JWT_SECRET: 'bench-secret-bench-secret-bench-secret!' };
  const product = await startChild(['src/main.ts'], { ...env, PORT: String(PRODUCT_PORT) }, PRODUCT_PORT);
  const baseline = await startChild(['scripts/bench.ts', '--baseline'], env, BASELINE_PORT);
  try {
    const productUrl = `http://127.0.0.1:${PRODUCT_PORT}/v1/agents/${agent.id}`;
    const baselineUrl = `http://127.0.0.1:${BASELINE_PORT}/v1/agents/${agent.id}`;
    const check = await fetch(productUrl, { headers: { 'X-API-Key': key.key } });
    if (check.status !== 200) throw new Error(`product answered ${check.status}`);
    // Warm both up, then alternate short rounds so that a busy moment on the machine hits both alike.
    await load(productUrl, { 'X-API-Key': key.key }, 3);
    await load(baselineUrl, {}, 3);
    const productRuns: autocannon.Result[] = [];
    const baselineRuns: autocannon.Result[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      productRuns.push(await load(productUrl, { 'X-API-Key': key.key }, DURATION));
      baselineRuns.push(await load(baselineUrl, {}, DURATION));
    }
    const failures = [...productRuns, ...baselineRuns].reduce((n, r) => n + r.non2xx + r.errors, 0);
    if (failures > 0) throw new Error(`${failures} failed or non-2xx answers`);
    const p = summarize(productRuns);
    const b = summarize(baselineRuns);
    const row = (name: string, r: Summary) =>
      `${name.padEnd(26)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}`;
    process.stdout.write(
      [
        `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
        `database: ${config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}; ${CONNECTIONS} connections; ${ROUNDS} alternating rounds of ${DURATION} s each`,
        '',
        `${'server'.padEnd(26)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}`,
        row('product (API key chain)', p),
        row('baseline (one PK read)', b),
        '',
        `throughput ratio product/baseline: ${(p.rps / b.rps).toFixed(2)} (target >= 0.80)`,
        `p50 ratio baseline/product: ${(b.p50 / Math.max(p.p50, 0.001)).toFixed(2)}; p99 ratio baseline/product: ${(b.p99 / Math.max(p.p99, 0.001)).toFixed(2)}`,
        '',
      ].join('\n'),
    );
  } finally {
    product.kill('SIGTERM');
    baseline.kill('SIGTERM');
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
