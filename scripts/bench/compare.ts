/**
 * compare: the chain (authenticated GET /v1/agents/{agentId}, read cache on and off) served by two or
 * more compiled checkouts of the product side by side, so a change's cost is measured against the
 * code before it on the same machine at the same moment (two separate runs of the chain scenario
 * differ by more than the few per cent such a change is allowed).
 * BENCH_COMPARE=<dir>,<dir>[,...]: checkouts with node_modules and dist/ (`npm run build`); the first
 * is the reference. Each runs as `npm run start:prod` there would, migrating a database of its own
 * (DATABASE_URL's database name + `_compare_<n>`, created afresh), so checkouts with different
 * migrations compare. Ratios above 1 mean more requests per second (or more work per request).
 *
 * Two measures:
 * - req/s in alternating rounds (the order reversed every other round), with each server's own CPU
 *   time per request read from /proc;
 * - BENCH_INSTRUCTIONS=<n>: machine instructions per request, counted by valgrind's callgrind over
 *   n requests after as many uninstrumented ones of warm-up, one server at a time. The server's timers
 *   (cache heartbeats, pool reaping) run by the wall clock, which callgrind and a busy machine
 *   stretch, so their rate is counted for 15 s without requests and taken out. What remains depends
 *   far less on what else the machine is doing than req/s. The event loop's thread is also counted
 *   alone: V8's helper threads (concurrent marking and sweeping of major collections, optimising
 *   compilation) do work whose amount over a few thousand requests depends on how many major
 *   collections and recompilations happen to fall in them, so two runs of one build can differ by
 *   a fifth in the whole count; the event loop's count is the steadier one for the chain's own code.
 * BENCH_COMPARE_CACHE=on|off: only the cache-on (or cache-off) target of each checkout, e.g. to locate
 * a cost across several commits in half the time; ratios are then against the reference's same target.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { createDb } from '../../src/db/knex.js';
import {
  alternatingRounds,
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
} from './support.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const INSTRUCTIONS = Number(process.env.BENCH_INSTRUCTIONS ?? 0);
const CACHE = process.env.BENCH_COMPARE_CACHE ?? 'both';
if (!['on', 'off', 'both'].includes(CACHE)) throw new Error('BENCH_COMPARE_CACHE is on, off or both');
/** Targets per checkout: cache on and off, or one of them. */
const PER_CHECKOUT = CACHE === 'both' ? 2 : 1;
/** How long the idle instructions (timers) are counted after the requests. */
const IDLE_MS = 15_000;

type Target = {
  name: string;
  dir: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  path: string;
  headers: Record<string, string>;
};

export async function compare(db: Knex, databaseUrl: string) {
  const dirs = (process.env.BENCH_COMPARE ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean)
    .map((d) => path.resolve(d));
  if (dirs.length < 2) throw new Error('BENCH_COMPARE names at least two built checkouts, separated by commas');
  const targets: Target[] = [];
  for (const [i, dir] of dirs.entries()) {
    const url = new URL(databaseUrl);
    const name = `${url.pathname.slice(1)}_compare_${i}`;
    await db.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    await db.raw('CREATE DATABASE ??', [name]);
    url.pathname = `/${name}`;
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: url.toString(),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      WORKERS_ENABLED: 'false',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
    };
    const { args, env: startEnv } = productEntry(dir);
    if (!args.includes('dist/main.js')) throw new Error(`${dir} has no dist/main.js: run npm run build there`);
    Object.assign(env, startEnv);
    // A first start migrates the database with the checkout's own migrations.
    await (await startServer(args, env, [], dir)).stop();
    const own = createDb(url.toString(), 2);
    try {
      const t = await tenant(own, `Bench compare ${i}`);
      const label = `${i}: ${path.basename(dir)}`;
      const common = { dir, args, path: `/v1/agents/${t.agentId}`, headers: { 'X-API-Key': t.key } };
      if (CACHE !== 'off') targets.push({ name: `${label}, cache on`, env, ...common });
      if (CACHE !== 'on')
        targets.push({ name: `${label}, cache off`, env: { ...env, READ_CACHE_ENABLED: 'false' }, ...common });
    } finally {
      await own.destroy();
    }
  }
  return INSTRUCTIONS > 0 ? instructions(targets) : requestsPerSecond(targets);
}

/** Cache on against the reference's cache on, off against off. */
const referenceOf = (i: number) => i % PER_CHECKOUT;

async function requestsPerSecond(targets: Target[]) {
  const servers: Server[] = [];
  try {
    for (const t of targets) servers.push(await startServer(t.args, t.env, [], t.dir));
    const { runs, cpuMs: cpu } = await alternatingRounds(
      targets.map((t, i) => ({ url: `${servers[i]!.url}${t.path}`, pid: servers[i]!.pid, headers: t.headers })),
      { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS },
    );
    const summaries = runs.map((r) => summarize(r));
    // The server's own CPU time per request: steadier than req/s on a machine whose CPU is shared.
    const cpuUs = cpu.map((ms, i) => (1000 * ms) / summaries[i]!.requests);
    const rate = (r: autocannon.Result) => r.requests.total / r.duration;
    const ratios = Object.fromEntries(
      targets.slice(PER_CHECKOUT).map((t, j) => {
        const i = j + PER_CHECKOUT;
        const ref = referenceOf(i);
        return [
          t.name,
          {
            rps: summaries[i]!.rps / summaries[ref]!.rps,
            // Per round, so a slow moment of the machine counts against both sides of a pair alike.
            per_round: runs[i]!.map((run, r) => Number(f(rate(run) / rate(runs[ref]![r]!), 3))),
            cpu_per_request: cpuUs[i]! / cpuUs[ref]!,
          },
        ];
      }),
    );
    process.stdout.write(
      [
        `compare: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s`,
        `${'server'.padEnd(34)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('CPU us/req', 11)}`,
        ...targets.map(
          (t, i) =>
            `${t.name.padEnd(34)} ${pad(summaries[i]!.rps, 8)} ${pad(summaries[i]!.p50, 7)} ${pad(summaries[i]!.p99, 7)} ${pad(f(cpuUs[i]!, 1), 11)}`,
        ),
        ...Object.entries(ratios).map(
          ([name, r]) =>
            `${name} / reference: req/s ${f(r.rps, 3)} (rounds ${r.per_round.join(', ')}), CPU per request ${f(r.cpu_per_request, 3)}`,
        ),
        '',
      ].join('\n'),
    );
    return {
      measure: 'req/s',
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      servers: Object.fromEntries(targets.map((t, i) => [t.name, { ...summaries[i], cpu_us_per_request: cpuUs[i] }])),
      ratios,
    };
  } finally {
    for (const s of servers) await s.stop();
  }
}

const run = promisify(execFile);

async function instructions(targets: Target[]) {
  const perRequest: number[] = [];
  const idleShare: number[] = [];
  const loopPerRequest: number[] = [];
  for (const t of targets) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-callgrind-'));
    // vgdb names its pipes after HOST and the user; callgrind_control must see the same values.
    const names = { HOST: '127.0.0.1', USER: os.userInfo().username };
    const prefix = path.join(dir, 'vgdb');
    // Slow under callgrind: no silence watchdog, longer waits for connections.
    const slow = {
      DATABASE_SILENCE_MS: '0',
      DATABASE_ACQUIRE_TIMEOUT_MS: '60000',
      DATABASE_CONNECT_TIMEOUT_MS: '60000',
    };
    const server = await startServer(t.args, { ...t.env, ...slow, ...names }, [], t.dir, [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--vgdb-prefix=${prefix}`,
      `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`,
    ]);
    try {
      const url = `${server.url}${t.path}`;
      const control = (...args: string[]) =>
        run('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args, String(server.pid)], {
          env: { ...process.env, ...names },
        });
      // Warm-up uninstrumented: V8 compiles and optimises the chain before anything is counted.
      await load(url, { headers: t.headers, connections: 4, duration: 0, amount: INSTRUCTIONS, timeout: 120 });
      await control('--instr=on');
      await control('--zero');
      const started = Date.now();
      const measured = await load(url, {
        headers: t.headers,
        connections: 4,
        duration: 0,
        amount: INSTRUCTIONS,
        timeout: 120,
      });
      const loadedMs = Date.now() - started;
      await control('--dump'); // callgrind.out.1: the requests, and the timers that ran meanwhile
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      await control('--dump'); // callgrind.out.2: the timers alone (cache heartbeats, pool, metrics)
      await control('--instr=off');
      // Under callgrind a request can take a second; a stray failed one does not change a per-request count.
      if (failures([measured]) > measured.requests.total / 100)
        throw new Error(
          `${t.name}: ${measured.non2xx} non-2xx answers, ${measured.errors} errors, ${measured.timeouts} timeouts`,
        );
      // One file per thread and dump, `callgrind.out.<dump>-<thread>`; thread 01 is the event loop.
      const files = readdirSync(dir);
      const totals = (n: number, thread?: string) =>
        files
          .filter((name) => name.startsWith(`callgrind.out.${n}-`) && (!thread || name.endsWith(`-${thread}`)))
          .reduce(
            (sum, name) => sum + Number(/^totals: (\d+)/m.exec(readFileSync(path.join(dir, name), 'utf8'))?.[1] ?? NaN),
            0,
          );
      // Timers run by the wall clock, and a run under callgrind lasts as long as the machine lets it:
      // their share is taken out at the rate measured while idle.
      const idlePerMs = totals(2) / IDLE_MS;
      perRequest.push((totals(1) - idlePerMs * loadedMs) / measured.requests.total);
      idleShare.push((idlePerMs * loadedMs) / totals(1));
      loopPerRequest.push((totals(1, '01') - (totals(2, '01') / IDLE_MS) * loadedMs) / measured.requests.total);
      process.stdout.write(
        // The uncounted figure too: on a very busy machine the idle rate can overshoot (a share near or
        // above 100 % means the correction, not the requests, decides the result).
        `${t.name}: ${Math.round(perRequest.at(-1)!)} instructions per request (timers taken out: ${f(100 * idleShare.at(-1)!, 1)} % of the count; ${Math.round(totals(1) / measured.requests.total)} before), ${Math.round(loopPerRequest.at(-1)!)} on the event loop\n`,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ratioOf = (counts: number[]) =>
    Object.fromEntries(
      targets
        .slice(PER_CHECKOUT)
        .map((t, j) => [t.name, counts[j + PER_CHECKOUT]! / counts[referenceOf(j + PER_CHECKOUT)]!]),
    );
  const ratios = ratioOf(perRequest);
  const loopRatios = ratioOf(loopPerRequest);
  process.stdout.write(
    [
      `compare: machine instructions per request (callgrind), ${INSTRUCTIONS} requests after ${INSTRUCTIONS} of warm-up, 4 connections`,
      `${'server'.padEnd(34)} ${pad('all threads', 12)} ${pad('event loop', 12)}`,
      ...targets.map(
        (t, i) =>
          `${t.name.padEnd(34)} ${pad(Math.round(perRequest[i]!), 12)} ${pad(Math.round(loopPerRequest[i]!), 12)}`,
      ),
      ...Object.entries(ratios).map(
        ([name, r]) => `${name} / reference: ${f(r, 3)} (event loop ${f(loopRatios[name]!, 3)})`,
      ),
      '',
    ].join('\n'),
  );
  return {
    measure: 'instructions per request',
    requests: INSTRUCTIONS,
    servers: Object.fromEntries(
      targets.map((t, i) => [
        t.name,
        {
          instructions_per_request: perRequest[i],
          event_loop_instructions_per_request: loopPerRequest[i],
          timer_share: idleShare[i],
        },
      ]),
    ),
    ratios,
    event_loop_ratios: loopRatios,
  };
}
