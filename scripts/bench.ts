/**
 * npm run bench [-- <scenario>...]: chain, calls, webhooks, kb, memory, simulate, erasure, analytics (all when none is named);
 * compare (BENCH_COMPARE=<checkout>,<checkout>: the chain of built checkouts side by side) only when named.
 * Each scenario prints its figures and the ratio to a baseline measured in the same run, and the
 * results are merged into bench-results.json. DATABASE_URL is used when set (the database is
 * migrated and gets bench data), otherwise an embedded PostgreSQL under .data/bench.
 * Environment knobs: BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS (chain), BENCH_CALLS_*,
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
import { memory } from './bench/memory.js';
import { simulate } from './bench/simulate.js';
import { freePort, machine } from './bench/support.js';
import { webhooks } from './bench/webhooks.js';

const SCENARIOS = [
  'chain',
  'calls',
  'webhooks',
  'kb',
  'memory',
  'simulate',
  'erasure',
  'analytics',
  'compare',
] as const;
type Scenario = (typeof SCENARIOS)[number];
const RESULTS = 'bench-results.json';

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((a) => !(SCENARIOS as readonly string[]).includes(a));
  if (unknown.length) throw new Error(`Unknown scenario ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  // compare needs BENCH_COMPARE and runs only when named.
  const run: Scenario[] = asked.length ? (asked as Scenario[]) : SCENARIOS.filter((s) => s !== 'compare');

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
    `machine: ${machine()}\ndatabase: ${config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}\n\n`,
  );

  const results: Record<string, unknown> = existsSync(RESULTS)
    ? ((JSON.parse(readFileSync(RESULTS, 'utf8')) as { scenarios?: Record<string, unknown> }).scenarios ?? {})
    : {};
  const rss: { chain?: number[]; calls?: number[] } = {};
  try {
    for (const scenario of run) {
      const at = new Date().toISOString();
      let result: unknown;
      if (scenario === 'chain') {
        const samples: number[] = [];
        result = await chain(database.db, database.url, { rss: samples });
        rss.chain = samples;
      } else if (scenario === 'calls') {
        const samples: number[] = [];
        result = await calls(database.db, database.url, { rss: samples });
        rss.calls = samples;
      } else if (scenario === 'webhooks') result = await webhooks(database.db, database.url);
      else if (scenario === 'kb') result = await kb(database.db, database.url);
      else if (scenario === 'simulate') result = await simulate(database.db, database.url);
      else if (scenario === 'erasure') result = await erasure(database.db, database.url);
      else if (scenario === 'analytics') result = await analytics(database.db, database.url);
      else if (scenario === 'compare') result = await compare(database.db, database.url);
      else result = await memory(database.db, database.url, rss);
      results[scenario] = { at, machine: machine(), result };
      writeFileSync(RESULTS, `${JSON.stringify({ scenarios: results }, null, 2)}\n`);
    }
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
