/**
 * memory: the product's RSS sampled every 250 ms under a chain load (GET one agent, 50 connections)
 * and a calls load (a page of 100 calls, 10 connections), 10 s each, then without requests for
 * BENCH_MEMORY_IDLE_SECONDS (45): the idle figure is the last sample, after the product's idle
 * collection (30 s without a request, src/ops/idle-memory.ts) has given memory back. The chain and calls scenarios' own samples of the same run, when they ran, count for
 * the figure under load too. Also the time from starting the product with its embedded PostgreSQL
 * (existing data directory) to the first answer of /v1/health.
 */
import { rmSync } from 'node:fs';
import type { Knex } from 'knex';
import { freePort, load, median, productEntry, rssMb, sampleRss, startServer, tenant } from './support.js';

const DATA_DIR = '.data/bench-embedded';
const IDLE_SECONDS = Number(process.env.BENCH_MEMORY_IDLE_SECONDS ?? 45);
const TARGET_LOAD_MB = 160;
const TARGET_IDLE_MB = 120;

export async function memory(db: Knex, databaseUrl: string, sampled: { chain?: number[]; calls?: number[] }) {
  const entry = productEntry();
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    WORKERS_ENABLED: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const t = await tenant(db, 'Bench memory');
  const product = await startServer(entry.args, { ...entry.env, ...env });
  let own: { chain: number[]; calls: number[]; idle: number[]; started: number };
  try {
    const started = rssMb(product.pid) ?? 0;
    const headers = { 'X-API-Key': t.key };
    let rss = sampleRss(product.pid);
    await load(`${product.url}/v1/agents/${t.agentId}`, { headers, connections: 50, duration: 10 });
    const chain = rss.stop();
    rss = sampleRss(product.pid);
    await load(`${product.url}/v1/agents/${t.agentId}/calls?limit=100`, { headers, connections: 10, duration: 10 });
    const calls = rss.stop();
    rss = sampleRss(product.pid, 1000);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idle = rss.stop();
    own = { chain, calls, idle, started };
  } finally {
    await product.stop();
  }
  const embedded = await embeddedStart();
  const chain = [...own.chain, ...(sampled.chain ?? [])];
  const calls = [...own.calls, ...(sampled.calls ?? [])];
  const underLoad = Math.max(...chain, ...calls);
  const idle = own.idle.at(-1) ?? 0;
  const result = {
    runtime: entry.runtime,
    rss_mb: {
      started: own.started,
      chain: { median: median(chain), max: Math.max(...chain), of_chain_scenario: sampled.chain !== undefined },
      calls: { median: median(calls), max: Math.max(...calls), of_calls_scenario: sampled.calls !== undefined },
      max: underLoad,
      idle_after_load: idle,
      idle_seconds: IDLE_SECONDS,
    },
    embedded_start_ms: embedded,
    targets: {
      [`RSS <= ${TARGET_LOAD_MB} MB under load`]: underLoad <= TARGET_LOAD_MB,
      [`RSS <= ${TARGET_IDLE_MB} MB idle after load`]: idle <= TARGET_IDLE_MB,
      'embedded start <= 5000 ms': embedded <= 5000,
    },
  };
  process.stdout.write(
    [
      `memory: product runs ${entry.runtime}`,
      `RSS after start ${own.started} MB; under chain: median ${result.rss_mb.chain.median} MB, max ${result.rss_mb.chain.max} MB; under calls: median ${result.rss_mb.calls.median} MB, max ${result.rss_mb.calls.max} MB (target <= ${TARGET_LOAD_MB}); idle ${IDLE_SECONDS} s after the load: ${idle} MB (target <= ${TARGET_IDLE_MB})`,
      `start with the embedded PostgreSQL (existing data directory) to first /v1/health answer: ${embedded} ms (target <= 5000)`,
      '',
    ].join('\n'),
  );
  return result;
}

/** First start initialises the data directory (not timed); the second start is timed. */
async function embeddedStart(): Promise<number> {
  rmSync(DATA_DIR, { recursive: true, force: true });
  const env = {
    DATABASE_URL: '',
    DATA_DIR,
    EMBEDDED_PG_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    WORKERS_ENABLED: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const entry = productEntry();
  const first = await startServer(entry.args, { ...entry.env, ...env });
  await first.stop();
  const started = performance.now();
  const second = await startServer(entry.args, { ...entry.env, ...env });
  const elapsed = Math.round(performance.now() - started);
  await second.stop();
  rmSync(DATA_DIR, { recursive: true, force: true });
  return elapsed;
}
