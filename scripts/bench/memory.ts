/**
 * memory: the product's RSS sampled every 250 ms under the chain and calls scenarios (taken from
 * their runs when `npm run bench` runs everything, else from a short load of each here), and the
 * time from starting the product with its embedded PostgreSQL (existing data directory) to the
 * first answer of /v1/health.
 */
import { rmSync } from 'node:fs';
import type { Knex } from 'knex';
import { freePort, load, median, productEntry, sampleRss, startServer, tenant } from './support.js';

const DATA_DIR = '.data/bench-embedded';

export async function memory(db: Knex, databaseUrl: string, sampled: { chain?: number[]; calls?: number[] }) {
  const entry = productEntry();
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    WORKERS_ENABLED: 'true',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  if (!sampled.chain || !sampled.calls) {
    const t = await tenant(db, 'Bench memory');
    const product = await startServer(entry.args, env);
    try {
      const headers = { 'X-API-Key': t.key };
      let rss = sampleRss(product.pid);
      await load(`${product.url}/v1/agents/${t.agentId}`, { headers, connections: 50, duration: 10 });
      sampled.chain = rss.stop();
      rss = sampleRss(product.pid);
      await load(`${product.url}/v1/agents/${t.agentId}/calls?limit=100`, { headers, connections: 10, duration: 10 });
      sampled.calls = rss.stop();
    } finally {
      await product.stop();
    }
  }
  const embedded = await embeddedStart();
  const all = [...sampled.chain, ...sampled.calls];
  const result = {
    runtime: entry.runtime,
    rss_mb: {
      chain: { median: median(sampled.chain), max: Math.max(...sampled.chain) },
      calls: { median: median(sampled.calls), max: Math.max(...sampled.calls) },
      max: Math.max(...all),
    },
    embedded_start_ms: embedded,
    targets: { 'RSS <= 200 MB': Math.max(...all) <= 200, 'embedded start <= 5000 ms': embedded <= 5000 },
  };
  process.stdout.write(
    [
      `memory: product runs ${entry.runtime}`,
      `RSS under chain: median ${result.rss_mb.chain.median} MB, max ${result.rss_mb.chain.max} MB; under calls: median ${result.rss_mb.calls.median} MB, max ${result.rss_mb.calls.max} MB (target <= 200)`,
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
  const first = await startServer(entry.args, env);
  await first.stop();
  const started = performance.now();
  const second = await startServer(entry.args, env);
  const elapsed = Math.round(performance.now() - started);
  await second.stop();
  rmSync(DATA_DIR, { recursive: true, force: true });
  return elapsed;
}
