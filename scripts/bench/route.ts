/**
 * route: POST /v1/runtime/route through the whole product (key check, rate limit, the number, the
 * agents and their current configurations from the read cache, the caller's contacts by one
 * pipelined statement, the one call decision for the agent and for its backup, which answers) next
 * to the one-PK-read baseline, in alternating rounds, with the product's CPU time per route. The
 * agent is the simulate scenario's: hours, exceptions, holidays, greeting variants, a backup,
 * employees, forwarding slots and tools. 10 connections, as simulate and kb: on two cores the p99
 * grows with connections times the CPU per route, so that figure is the one to cut.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { cpuMs, f, failures, load, pad, productEntry, ROUNDS, SECONDS, startServer, summarize } from './support.js';
import { seed } from './simulate.js';

const CONNECTIONS = Number(process.env.BENCH_ROUTE_CONNECTIONS ?? 10);
const CALLER = '+4917612345678';

export async function route(db: Knex, databaseUrl: string) {
  const t = await seed(db);
  const { phone_number: number } = await db('agents').where({ id: t.agentId }).first('phone_number');
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const entry = productEntry();
  const product = await startServer(entry.args, { ...entry.env, ...env });
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], env);
  try {
    const headers = { 'X-API-Key': t.key, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ called_number: number, caller_number: CALLER, call_id: 'bench-route-1' });
    const routeUrl = `${product.url}/v1/runtime/route`;
    const targets = [
      { url: routeUrl, method: 'POST' as const, body, runs: [] as autocannon.Result[] },
      {
        url: `${baseline.url}/v1/agents/${t.agentId}`,
        method: 'GET' as const,
        body: undefined,
        runs: [] as autocannon.Result[],
      },
    ];
    const check = await fetch(routeUrl, { method: 'POST', headers, body });
    if (check.status !== 200) throw new Error(`route answered ${check.status}: ${await check.text()}`);
    for (const target of targets) await load(target.url, { ...target, headers, connections: CONNECTIONS, duration: 2 });
    let productCpuMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, target] of targets.entries()) {
        const before = i === 0 ? (cpuMs(product.pid) ?? 0) : 0;
        target.runs.push(await load(target.url, { ...target, headers, connections: CONNECTIONS, duration: SECONDS }));
        if (i === 0) productCpuMs += (cpuMs(product.pid) ?? 0) - before;
      }
    }
    const failed = failures(targets.flatMap((x) => x.runs));
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const [routed, base] = targets.map((x) => summarize(x.runs)) as [
      ReturnType<typeof summarize>,
      ReturnType<typeof summarize>,
    ];
    const result = {
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      runtime: entry.runtime,
      route: routed,
      /** The product's CPU time (all threads, collection included) per answered route. */
      route_cpu_us: Math.round((1000 * productCpuMs) / routed.requests),
      baseline: base,
      ratio_route_vs_baseline_rps: routed.rps / base.rps,
      targets: { 'route p99 <= 10 ms': routed.p99 <= 10 },
    };
    const row = (name: string, r: { rps: number; p50: number; p99: number }) =>
      `${name.padEnd(26)} ${pad(r.rps, 8)} ${pad(r.p50, 7)} ${pad(r.p99, 7)}`;
    process.stdout.write(
      [
        `route: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product runs ${entry.runtime}`,
        `${'server'.padEnd(26)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)}`,
        `${row('product: POST route', routed)}  (CPU ${result.route_cpu_us} µs per route)`,
        row('baseline (one PK read)', base),
        `ratio route/baseline ${f(result.ratio_route_vs_baseline_rps)}`,
        `targets: ${Object.entries(result.targets)
          .map(([k, v]) => `${k}: ${v ? 'met' : 'MISSED'}`)
          .join('; ')}`,
        '',
      ].join('\n'),
    );
    return result;
  } finally {
    await product.stop();
    await baseline.stop();
  }
}
