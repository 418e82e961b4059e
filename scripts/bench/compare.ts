/**
 * compare: the chain (authenticated GET /v1/agents/{agentId}, read cache on and off) served by two or
 * more compiled checkouts of the product, in alternating rounds within one run, so a change's cost is
 * measured against the code before it on the same machine at the same moment (two separate runs of
 * the chain scenario differ by more than the few per cent such a change is allowed).
 * BENCH_COMPARE=<dir>,<dir>[,...]: checkouts with node_modules and dist/ (`npm run build`); the first
 * is the reference. Each runs as `npm run start:prod` there would, migrating a database of its own
 * (DATABASE_URL's database name + `_compare_<n>`, created afresh), so checkouts with different
 * migrations compare. Ratios above 1 mean faster than the reference.
 */
import path from 'node:path';
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { createDb } from '../../src/db/knex.js';
import {
  cpuMs,
  f,
  failures,
  load,
  pad,
  productEntry,
  ROUNDS,
  SECONDS,
  startServer,
  summarize,
  tenant,
  type Server,
  type Summary,
} from './support.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export async function compare(db: Knex, databaseUrl: string) {
  const dirs = (process.env.BENCH_COMPARE ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean)
    .map((d) => path.resolve(d));
  if (dirs.length < 2) throw new Error('BENCH_COMPARE names at least two built checkouts, separated by commas');
  const servers: Server[] = [];
  const targets: {
    name: string;
    url: string;
    pid: number;
    headers: Record<string, string>;
    runs: autocannon.Result[];
    cpuMs: number;
  }[] = [];
  try {
    for (const [i, dir] of dirs.entries()) {
      const url = new URL(databaseUrl);
      const name = `${url.pathname.slice(1)}_compare_${i}`;
      await db.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
      await db.raw('CREATE DATABASE ??', [name]);
      url.pathname = `/${name}`;
      const env = {
        DATABASE_URL: url.toString(),
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        WORKERS_ENABLED: 'false',
        JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
      };
      const entry = productEntry(dir);
      if (!entry.args.includes('dist/main.js')) throw new Error(`${dir} has no dist/main.js: run npm run build there`);
      // The first start migrates the database; the tenant is written with this checkout's repository.
      const cached = await startServer(entry.args, env, [], dir);
      servers.push(cached);
      const uncached = await startServer(entry.args, { ...env, READ_CACHE_ENABLED: 'false' }, [], dir);
      servers.push(uncached);
      const own = createDb(url.toString(), 2);
      try {
        const t = await tenant(own, `Bench compare ${i}`);
        const headers = { 'X-API-Key': t.key };
        const label = `${path.basename(dir)}${i === 0 ? ' (reference)' : ''}`;
        targets.push(
          {
            name: `${label}, cache on`,
            url: `${cached.url}/v1/agents/${t.agentId}`,
            pid: cached.pid,
            headers,
            runs: [],
            cpuMs: 0,
          },
          {
            name: `${label}, cache off`,
            url: `${uncached.url}/v1/agents/${t.agentId}`,
            pid: uncached.pid,
            headers,
            runs: [],
            cpuMs: 0,
          },
        );
      } finally {
        await own.destroy();
      }
    }
    for (const target of targets) {
      const check = await fetch(target.url, { headers: target.headers });
      if (check.status !== 200) throw new Error(`${target.url} answered ${check.status}`);
      await load(target.url, { headers: target.headers, connections: CONNECTIONS, duration: 2 }); // warm up
    }
    for (let round = 0; round < ROUNDS; round++)
      for (const target of round % 2 ? [...targets].reverse() : targets) {
        const cpuBefore = cpuMs(target.pid);
        target.runs.push(
          await load(target.url, { headers: target.headers, connections: CONNECTIONS, duration: SECONDS }),
        );
        target.cpuMs += cpuMs(target.pid) - cpuBefore;
      }
    const failed = failures(targets.flatMap((t) => t.runs));
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const summaries = targets.map((t) => summarize(t.runs));
    // The server's own CPU time per request: steadier than req/s on a machine whose CPU is shared.
    const cpuUs = targets.map((t, i) => (1000 * t.cpuMs) / summaries[i]!.requests);
    // Per round, so a slow moment of the machine counts against both sides of a pair alike.
    const roundRatios = (a: number, b: number) =>
      targets[a]!.runs.map(
        (run, r) =>
          run.requests.total / run.duration / (targets[b]!.runs[r]!.requests.total / targets[b]!.runs[r]!.duration),
      );
    const ratios = Object.fromEntries(
      targets.slice(2).map((t, j) => {
        const reference = j % 2; // cache on against cache on, off against off
        const perRound = roundRatios(j + 2, reference);
        return [
          t.name,
          {
            rps: summaries[j + 2]!.rps / summaries[reference]!.rps,
            per_round: perRound.map((x) => Number(f(x, 3))),
            cpu_per_request: cpuUs[j + 2]! / cpuUs[reference]!,
          },
        ];
      }),
    );
    const row = (name: string, r: Summary, cpu: number) =>
      `${name.padEnd(40)} ${pad(r.rps, 8)} ${pad(r.p50, 7)} ${pad(r.p99, 7)} ${pad(f(cpu, 1), 9)}`;
    process.stdout.write(
      [
        `compare: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s`,
        `${'server'.padEnd(40)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('CPU us/req', 9)}`,
        ...targets.map((t, i) => row(t.name, summaries[i]!, cpuUs[i]!)),
        ...Object.entries(ratios).map(
          ([name, r]) =>
            `${name} / reference: req/s ${f(r.rps, 3)} (rounds: ${r.per_round.join(', ')}), CPU per request ${f(r.cpu_per_request, 3)}`,
        ),
        '',
      ].join('\n'),
    );
    return {
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      checkouts: dirs,
      servers: Object.fromEntries(targets.map((t, i) => [t.name, { ...summaries[i], cpu_us_per_request: cpuUs[i] }])),
      ratios,
    };
  } finally {
    for (const s of servers) await s.stop();
  }
}
