/**
 * chain: authenticated GET /v1/agents/{agentId} through the whole product (key check, rate limit,
 * scope check, agent read) with the read cache on and off, next to the one-PK-read baseline and the
 * bare Express floor (each served by `app.listen`, and once more by the product's HTTP server), in
 * alternating rounds, with each server's CPU time per request (steadier than req/s on a shared
 * machine). BENCH_RATE offers a fixed number of requests per second instead of as many as answered
 * (then the CPU time per request is the figure). With BENCH_PROFILE=1 the cached product (BENCH_PROFILE=uncached: the one
 * without the read cache) runs under --cpu-prof and its busy time is listed by component (package
 * or product file).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import {
  cpuMs,
  f,
  failures,
  load,
  pad,
  productEntry,
  ROUNDS,
  sampleRss,
  SECONDS,
  startServer,
  summarize,
  tenant,
  type Summary,
} from './support.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Offered requests per second (over all connections); as many as answered when unset. */
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
/** A pooler in transaction mode in front of DATABASE_URL's database (PgBouncer): two more servers. */
const POOLER_URL = process.env.BENCH_POOLER_URL;
const PROFILE_DIR = '.data/bench-profile';

export async function chain(db: Knex, databaseUrl: string, options: { rss?: number[] } = {}) {
  const t = await tenant(db, 'Bench chain');
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const profiled =
    process.env.BENCH_PROFILE === 'uncached' ? 'uncached' : process.env.BENCH_PROFILE === '1' ? 'cached' : null;
  const profile = profiled !== null;
  const profileArgs = ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`];
  if (profile) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const entry = productEntry();
  const product = await startServer(entry.args, { ...entry.env, ...env }, profiled === 'cached' ? profileArgs : []);
  const servers = [
    product,
    await startServer(
      entry.args,
      { ...entry.env, ...env, READ_CACHE_ENABLED: 'false' },
      profiled === 'uncached' ? profileArgs : [],
    ),
    await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], env),
    await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'floor'], env),
    await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline', 'product-server'], env),
    await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'floor', 'product-server'], env),
  ];
  const names = [
    'product (read cache on)',
    'product (read cache off)',
    'baseline (one PK read)',
    'floor (bare Express)',
    'baseline, product server',
    'floor, product server',
  ];
  if (POOLER_URL) {
    // Behind a pooler in transaction mode: no prepared statements (PgBouncer before 1.21 cannot
    // carry them), and the cache either listens directly (DATABASE_LISTEN_URL) or is off.
    const pooled = { ...env, DATABASE_URL: POOLER_URL, DATABASE_PREPARED_STATEMENTS: 'false' };
    servers.push(
      await startServer(entry.args, { ...entry.env, ...pooled, DATABASE_LISTEN_URL: databaseUrl }),
      await startServer(entry.args, { ...entry.env, ...pooled, READ_CACHE_ENABLED: 'false' }),
    );
    names.push('pooler, cache on (listen)', 'pooler, cache off');
  }
  const rss = sampleRss(product.pid);
  try {
    const headers = { 'X-API-Key': t.key };
    const targets = servers.map((s) => ({
      url: `${s.url}/v1/agents/${t.agentId}`,
      pid: s.pid,
      runs: [] as autocannon.Result[],
      cpuMs: 0,
    }));
    for (const target of targets) {
      const check = await fetch(target.url, { headers });
      if (check.status !== 200) throw new Error(`${target.url} answered ${check.status}`);
      await load(target.url, { headers, connections: CONNECTIONS, duration: 2, rate: RATE }); // warm up
    }
    for (let round = 0; round < ROUNDS; round++)
      for (const target of targets) {
        const before = cpuMs(target.pid) ?? 0;
        target.runs.push(await load(target.url, { headers, connections: CONNECTIONS, duration: SECONDS, rate: RATE }));
        target.cpuMs += (cpuMs(target.pid) ?? 0) - before;
      }
    const failed = failures(targets.flatMap((t) => t.runs));
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const summaries = targets.map((t) => summarize(t.runs));
    // The server's CPU time (all its threads, garbage collection included) per answered request.
    const cpuUs = targets.map((t, i) => Math.round((10 * (1000 * t.cpuMs)) / summaries[i]!.requests) / 10);
    const [
      cached,
      uncached,
      baseline,
      floor,
      baselineOnProductServer,
      floorOnProductServer,
      pooledCached,
      pooledUncached,
    ] = summaries as [Summary, Summary, Summary, Summary, Summary, Summary, Summary?, Summary?];
    const rssSamples = rss.stop();
    options.rss?.push(...rssSamples);
    const result = {
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      rate: RATE ?? null,
      log_level: env.LOG_LEVEL,
      runtime: entry.runtime,
      servers: Object.fromEntries(names.map((n, i) => [n, { ...summaries[i], cpu_us_per_request: cpuUs[i] }])),
      ratios: {
        cached_vs_floor_rps: cached.rps / floor.rps,
        cached_vs_floor_on_product_server_rps: cached.rps / floorOnProductServer.rps,
        cached_vs_baseline_rps: cached.rps / baseline.rps,
        uncached_vs_baseline_rps: uncached.rps / baseline.rps,
        uncached_vs_baseline_on_product_server_rps: uncached.rps / baselineOnProductServer.rps,
        ...(pooledCached &&
          pooledUncached && {
            pooled_cached_vs_floor_rps: pooledCached.rps / floor.rps,
            pooled_uncached_vs_baseline_rps: pooledUncached.rps / baseline.rps,
          }),
      },
      targets: {
        'cached >= 0.6x floor': cached.rps / floor.rps >= 0.6,
        'uncached >= 1.0x baseline': uncached.rps / baseline.rps >= 1,
        'p99 <= 15 ms (cached)': cached.p99 <= 15,
        'p99 <= 15 ms (uncached)': uncached.p99 <= 15,
      },
      product_rss_mb: { max: Math.max(...rssSamples), samples: rssSamples.length },
      profile: undefined as undefined | { ms: number; share: string; component: string }[],
    };
    const row = (name: string, r: Summary, cpu: number) =>
      `${name.padEnd(26)} ${pad(r.rps, 8)} ${pad(r.p50, 7)} ${pad(r.p99, 7)} ${pad(f(cpu, 1), 8)}`;
    process.stdout.write(
      [
        `chain: ${CONNECTIONS} connections${RATE ? ` at ${RATE} req/s` : ''}, ${ROUNDS} alternating rounds of ${SECONDS} s, LOG_LEVEL ${env.LOG_LEVEL}; product runs ${entry.runtime}`,
        `${'server'.padEnd(26)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('CPU µs', 8)}`,
        ...names.map((n, i) => row(n, summaries[i]!, cpuUs[i]!)),
        `ratios: cached/floor ${f(result.ratios.cached_vs_floor_rps)} (target >= 0.60), cached/floor on the product's server ${f(result.ratios.cached_vs_floor_on_product_server_rps)}, cached/baseline ${f(result.ratios.cached_vs_baseline_rps)}, uncached/baseline ${f(result.ratios.uncached_vs_baseline_rps)} (target >= 1.00), on the product's server ${f(result.ratios.uncached_vs_baseline_on_product_server_rps)}`,
        ...(pooledCached && pooledUncached
          ? [
              `behind the pooler: cached/floor ${f(pooledCached.rps / floor.rps)}, uncached/baseline ${f(pooledUncached.rps / baseline.rps)}`,
            ]
          : []),
        `product RSS max ${result.product_rss_mb.max} MB`,
        '',
      ].join('\n'),
    );
    for (const s of servers) await s.stop();
    if (profile) {
      result.profile = topCosts(PROFILE_DIR, 20);
      process.stdout.write(
        [
          `busy CPU of the ${profiled} product by component (after start-up; Node internals counted for their caller):`,
          ...result.profile.map((p) => `  ${pad(p.share, 6)} ${p.component}`),
          '',
        ].join('\n'),
      );
    }
    return result;
  } finally {
    rss.stop();
    for (const s of servers) await s.stop();
  }
}

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};

/** Samples of the first seconds (module loading, start-up) are not the chain's. */
const PROFILE_SKIP_US = 3_000_000;

/** The package (`express`, `pino-http`) or product file a frame belongs to; undefined for Node's own code. */
function component(frame: ProfileNode['callFrame']): string | undefined {
  const { url } = frame;
  if (!url || url.startsWith('node:')) return undefined;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  return url.replace(/^file:\/\/.*?\/(dist|src|scripts)\//, '$1/');
}

/**
 * Busy time by component, from the .cpuprofile files Node wrote, largest first. Each sample counts
 * for the innermost frame that is not Node's own code, so the time Node spends on a component's
 * behalf (a socket write for `res.send`, a hash for the key check) is that component's.
 */
function topCosts(dir: string, n: number): { ms: number; share: string; component: string }[] {
  const totals = new Map<string, number>();
  let all = 0;
  for (const file of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
      nodes: ProfileNode[];
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    let elapsed = 0;
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i] ?? 0;
      elapsed += dt;
      const leaf = byId.get(id)!.callFrame;
      // Shares of busy time: waiting for I/O is not a cost of the chain.
      if (elapsed < PROFILE_SKIP_US || leaf.functionName === '(idle)' || leaf.functionName === '(program)') return;
      let name: string | undefined;
      for (let at: number | undefined = id; at !== undefined && !name; at = parent.get(at))
        name = component(byId.get(at)!.callFrame);
      name ??= leaf.functionName.startsWith('(') ? leaf.functionName : `node: ${leaf.functionName || leaf.url}`;
      totals.set(name, (totals.get(name) ?? 0) + dt / 1000);
      all += dt / 1000;
    });
  }
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, ms]) => ({ component: name, ms: Math.round(ms), share: `${((100 * ms) / all).toFixed(1)}%` }));
}
