/**
 * calls: one agent with `--calls` calls (1,000,000 by default; seeded with generate_series, reused by
 * later runs, see calls-seed.ts) and a second agent with 1,000; p99 of the list by page and by
 * cursor at depth, every filter and combinations, an outcome filter, search and statistics for the
 * year, each in alternating rounds with the one-PK-read baseline server; then intake at a fixed rate
 * (open model), a full NDJSON export with the product's RSS growth, and the erasure of one person's
 * 1,000 calls among them. `BENCH_CALLS_SEED_ONLY=1` seeds (or completes the seed) and stops.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { encodeCursor } from '../../src/api/pagination.js';
import { OUTCOME_FIELDS, timedExport } from './analytics.js';
import { END, seededCalls, seedSql } from './calls-seed.js';
import { measureErasure } from './erasure.js';
import {
  cpuMs,
  cpuSplitMs,
  failures,
  load,
  pad,
  percentile,
  productEntry,
  sampleRss,
  startServer,
  summarize,
  tenant,
  type Server,
  type Summary,
} from './support.js';

const SECONDS = Number(process.env.BENCH_CALLS_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_CALLS_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CALLS_CONNECTIONS ?? 4);
const INTAKE_RATE = Number(process.env.BENCH_CALLS_INTAKE_RATE ?? 500);
const INTAKE_SECONDS = Number(process.env.BENCH_CALLS_INTAKE_SECONDS ?? 60);
/**
 * Seconds of intake at the same rate right after start, reported apart and not part of the target
 * (as the webhooks bench does; 0 skips it): a server that never took a call compiles the intake's
 * code and plans its statements during its first second or two, when calls wait up to a second (the
 * same with the pool's connections opened ahead); in a minute's run those are about 1% of the calls,
 * the p99 of a sustained rate.
 */
const INTAKE_WARMUP_SECONDS = Number(process.env.BENCH_CALLS_INTAKE_WARMUP_SECONDS ?? 10);
const INTAKE_IN_FLIGHT = Number(process.env.BENCH_CALLS_INTAKE_IN_FLIGHT ?? 200);
/** `BENCH_CALLS_ERASURE=0` leaves the erasure out (it reads every call when its plan goes wrong). */
const ERASURE = process.env.BENCH_CALLS_ERASURE !== '0';
const SEED_ONLY = process.env.BENCH_CALLS_SEED_ONLY === '1';
/** `BENCH_CALLS_ONLY=intake` runs the intake alone (no queries, export or erasure) on the seeded data. */
const INTAKE_ONLY = process.env.BENCH_CALLS_ONLY === 'intake';
/** `BENCH_CALLS_ONLY=list` runs the list, search and statistics queries alone (no intake, export or erasure). */
const LIST_ONLY = process.env.BENCH_CALLS_ONLY === 'list';

/**
 * CPU so far (user + system, ms) of the product's process and of each PostgreSQL backend on this
 * database: a query's cost apart from the waiting that a loaded machine adds to its latency.
 */
async function cpuNow(db: Knex, pid: number): Promise<{ product: number; backends: Map<number, number> }> {
  const { rows }: { rows: { pid: number }[] } = await db.raw(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
  );
  const backends = new Map<number, number>();
  for (const row of rows) {
    const cpu = cpuSplitMs(row.pid);
    if (cpu) backends.set(row.pid, cpu.user + cpu.system);
  }
  const product = cpuSplitMs(pid);
  return { product: product ? product.user + product.system : 0, backends };
}

/** CPU between two cpuNow readings in ms (a backend that started between them counts from 0). */
function cpuSpent(before: Awaited<ReturnType<typeof cpuNow>>, after: Awaited<ReturnType<typeof cpuNow>>) {
  let postgres = 0;
  for (const [pid, ms] of after.backends) postgres += ms - (before.backends.get(pid) ?? 0);
  return { product: after.product - before.product, postgres };
}

/**
 * Intake at INTAKE_RATE calls/s for INTAKE_SECONDS to the seed's second agent, open model: call i is
 * sent at start + i / rate whatever the answers before it (autocannon's overallRate sends each
 * second's quota at once, a burst every second), each with a fresh call_id. At most
 * INTAKE_IN_FLIGHT calls wait for their answer: a server slower than the rate would otherwise
 * queue the whole minute in its heap (the compiled product, capped at 160 MB, ran out of memory that
 * way on a loaded machine); sends held back show as an achieved rate below the offered one.
 * Latency runs from the send. Gives the achieved rate, p50/p99 and the server's CPU (user and system)
 * per answered request: an answer other than 201 (a 503 after waiting for a pool connection) cost
 * CPU too, and dividing by the 201s alone overstated the cost of a call on a saturated server.
 */
/** The warm-up (INTAKE_WARMUP_SECONDS), then the measured intake into `agentId`, each reported. */
async function measuredIntake(db: Knex, product: Server, agentId: string, key: string) {
  const url = `${product.url}/v1/agents/${agentId}/calls`;
  const alive = () => product.child.exitCode === null;
  const backends = () => databaseBackendsCpu(db);
  let warmup: Awaited<ReturnType<typeof intake>> | null = null;
  if (INTAKE_WARMUP_SECONDS > 0) {
    warmup = await intake(url, key, product.pid, alive, backends, INTAKE_WARMUP_SECONDS);
    reportIntake(warmup, `intake warm-up (the server's first ${INTAKE_WARMUP_SECONDS} s of calls, no target)`, false);
  }
  const taken = await intake(url, key, product.pid, alive, backends);
  reportIntake(taken, 'intake', true);
  return { ...taken, warmup };
}

/**
 * CPU (user + system, ms) used so far by the PostgreSQL backends of the bench's database other than
 * the bench's own connection, by backend pid: the product's pool and its job queue's connections.
 */
async function databaseBackendsCpu(db: Knex): Promise<Map<number, number>> {
  const { rows } = await db.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows as { pid: number }[]) {
    const ms = cpuMs(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}

/** CPU the backends used between two databaseBackendsCpu readings (a backend started meanwhile counts whole). */
function backendsDelta(after: Map<number, number>, before: Map<number, number>): number {
  let ms = 0;
  for (const [pid, used] of after) ms += used - (before.get(pid) ?? 0);
  return ms;
}

const URGENCY = OUTCOME_FIELDS.find((field) => field.name === 'urgency')!.values!;

/**
 * Call `i` of an intake run as the telephony layer sends one: caller, request, summary, a
 * three-turn transcript and typed outcomes of every field of the agent (OUTCOME_FIELDS), so each
 * insert also fills the search and outcome indexes and the outcome counters, as the seeded calls did.
 */
function intakeCall(callId: string, i: number) {
  return {
    call_id: callId,
    phone_number: `+4930${String(i % 50_000).padStart(7, '0')}`,
    customer_name: `Anna Müller ${i % 97}`,
    customer_request: 'Heizung defekt',
    duration: i % 600,
    done: i % 3 === 0,
    general_success: i % 4 !== 0,
    call_summary: `Anrufer möchte eine Reparatur, Vorgang ${i}`,
    transcript: [
      { role: 'agent', text: 'Guten Tag, wie kann ich helfen?' },
      { role: 'user', text: 'Die Heizung ist kalt, seit gestern Abend schon, bitte schicken Sie jemanden.' },
      { role: 'agent', text: 'Ich notiere das, ein Techniker ruft Sie heute noch zurück.' },
    ],
    extracted_data: { urgency: URGENCY[i % 4], heating_issue: i % 5 === 0, units: i % 40, topic: `Thema ${i % 100}` },
  };
}

async function intake(
  url: string,
  key: string,
  pid: number,
  alive: () => boolean,
  backends: () => Promise<Map<number, number>>,
  duration = INTAKE_SECONDS,
) {
  const dbBefore = await backends();
  const before = cpuSplitMs(pid) ?? { user: 0, system: 0 };
  const latencies: number[] = [];
  /** Answers other than 201, by status ('none': no answer). */
  const failed: Record<string, number> = {};
  let dead = false;
  const run = Date.now();
  const total = INTAKE_RATE * duration;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  let waiting = 0;
  let heldBack = 0;
  let freed: (() => void) | undefined;
  let sent = 0;
  const end = started + duration * 1000;
  // Sends held back past the end of the minute are not made: the run stays a minute long.
  for (let i = 0; i < total && !dead && performance.now() < end; i++) {
    const wait = started + (i * 1000) / INTAKE_RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (waiting >= INTAKE_IN_FLIGHT) {
      heldBack += 1;
      await new Promise<void>((r) => (freed = r));
    }
    waiting += 1;
    sent += 1;
    inFlight.push(
      (async () => {
        const at = performance.now();
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
          body: JSON.stringify(intakeCall(`intake-${run}-${i}`, i)),
        }).catch(() => undefined);
        await res?.arrayBuffer();
        if (res?.status === 201) latencies.push(performance.now() - at);
        else failed[res?.status ?? 'none'] = (failed[res?.status ?? 'none'] ?? 0) + 1;
        // A server that exited: the rest of the minute would only count refusals.
        if (!res && !alive()) dead = true;
        waiting -= 1;
        freed?.();
        freed = undefined;
      })(),
    );
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  const answers =
    latencies.length +
    Object.entries(failed)
      .filter(([s]) => s !== 'none')
      .reduce((n, [, k]) => n + k, 0);
  const after = cpuSplitMs(pid) ?? before;
  const dbAfter = await backends();
  if (dead) throw new Error(`intake: the product exited (${JSON.stringify(failed)})`);
  return {
    offered_per_s: INTAKE_RATE,
    seconds: Number(seconds.toFixed(1)),
    calls: latencies.length,
    failed,
    held_back: heldBack,
    not_sent: total - sent,
    achieved_per_s: Math.round(latencies.length / seconds),
    p50_ms: Math.round(percentile(latencies, 50)),
    p99_ms: Math.round(percentile(latencies, 99)),
    ...perAnswer(after, before, answers),
    database_cpu_ms_per_call: Number((backendsDelta(dbAfter, dbBefore) / Math.max(answers, 1)).toFixed(2)),
  };
}

/** The server's CPU between two cpuSplitMs readings, per answered request, in ms. */
function perAnswer(after: { user: number; system: number }, before: { user: number; system: number }, answers: number) {
  const per = (ms: number) => Number((ms / Math.max(answers, 1)).toFixed(2));
  return {
    server_cpu_ms_per_call: per(after.user + after.system - before.user - before.system),
    server_user_ms_per_call: per(after.user - before.user),
    server_system_ms_per_call: per(after.system - before.system),
  };
}

const missed = (ok: boolean) => (ok ? '' : '  MISSED');

/** One intake run as a line named `name`, held to the target when `measured` (not the warm-up). */
function reportIntake(taken: Awaited<ReturnType<typeof intake>>, name: string, measured: boolean): void {
  const refused = Object.values(taken.failed).reduce((n, k) => n + k, 0);
  process.stdout.write(
    `${name}: ${taken.calls} calls in ${taken.seconds} s at ${taken.offered_per_s}/s offered, ${taken.achieved_per_s}/s achieved ` +
      `(target ${INTAKE_RATE}; ${taken.held_back} sends waited for one of ${INTAKE_IN_FLIGHT} in flight, ${taken.not_sent} not sent in time), p50 ${taken.p50_ms} ms, p99 ${taken.p99_ms} ms${measured ? ' (target <= 50)' : ''}, ` +
      `not 201: ${refused ? JSON.stringify(taken.failed) : 0}, server CPU ${taken.server_cpu_ms_per_call} ms per answer (user ${taken.server_user_ms_per_call}, system ${taken.server_system_ms_per_call}), ` +
      `PostgreSQL backends' CPU ${taken.database_cpu_ms_per_call} ms per answer` +
      `${measured ? missed(refused === 0 && taken.achieved_per_s >= INTAKE_RATE * 0.99 && taken.p99_ms <= 50) : ''}\n`,
  );
}

export async function calls(db: Knex, databaseUrl: string, options: { rss?: number[]; total?: number } = {}) {
  const seed = await seededCalls(db, options.total);
  const { big, other, total, seeding } = seed;
  if (seeding !== null)
    process.stdout.write(
      `calls: seeded ${total} calls (${seeding.statements} statements) with their indexes, counters and statistics in ${seeding.seconds.toFixed(1)} s ` +
        `(rows, indexes and counters ${seeding.rowsSeconds.toFixed(1)} s, VACUUM ANALYZE ${seeding.vacuumSeconds.toFixed(1)} s)\n`,
    );
  else process.stdout.write(`calls: reusing the seeded ${total} calls\n`);
  if (SEED_ONLY) {
    const size = await db.raw(
      `SELECT pg_size_pretty(pg_database_size(current_database())) AS database, pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS calls
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'calls'::regclass`,
    );
    process.stdout.write(
      `calls: seed only; database ${size.rows[0].database}, calls with indexes ${size.rows[0].calls}\n`,
    );
    return null;
  }
  // Fresh in every run and never analysed: a newly busy agent, as the planner first sees one.
  const small = await tenant(db, 'Bench calls 1k');
  await db.raw(seedSql('small', 1, 1000, 31_000), { org: small.orgId, agent: small.agentId });
  // Half-way down the big agent's calls (row 500,000 of 1M); a small --calls run still has such a row.
  const deepRow = Math.min(500_000, Math.floor(total / 2));
  const deep = await db('calls')
    .where({ agent_id: big.agentId })
    .whereNull('deleted_at')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(deepRow)
    .first(db.raw(`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`), 'id');
  const deepCursor = encodeCursor({ at: deep.at, id: deep.id });

  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const entry = productEntry();
  const product = await startServer(entry.args, { ...entry.env, ...env });
  if (INTAKE_ONLY) {
    try {
      const taken = await measuredIntake(db, product, other.agentId, big.key);
      return { calls: total, runtime: entry.runtime, intake: taken };
    } finally {
      await product.stop();
    }
  }
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], env);
  const rss = sampleRss(product.pid);
  const year = `from=2025-11-20&to=${END.slice(0, 10)}`;
  // [name, path under /v1/agents/<big agent>/ (the small agent's for the last), p99 target in ms]
  const queries: [string, string, number][] = [
    ['page 1', 'calls?limit=20', 50],
    ['page 500', 'calls?limit=20&page=500', 50],
    ['page 5,000 (row 100,000)', 'calls?limit=20&page=5000', 50],
    ['page 25,000 (row 500,000)', 'calls?limit=20&page=25000', 50],
    ['include_deleted, page 5,000', 'calls?include_deleted=true&limit=20&page=5000', 50],
    ['cursor= (start)', 'calls?limit=20&cursor=', 10],
    [`cursor at row ${deepRow.toLocaleString('en')}`, `calls?limit=20&cursor=${deepCursor}`, 10],
    ['done=true', 'calls?done=true', 50],
    ['done=false, page 100', 'calls?done=false&page=100', 50],
    ['include_deleted=true', 'calls?include_deleted=true', 50],
    ['from/to (one month)', 'calls?from=2026-06-01&to=2026-06-30', 50],
    ['from (date-time, open)', 'calls?from=2026-09-15T12:34:56Z', 50],
    ['to (date-time)', 'calls?to=2026-03-01T08:00:00Z', 50],
    ['phone_number', 'calls?phone_number=%2B49300012345', 50],
    ['done + from/to', 'calls?done=true&from=2026-02-10T06:00:00Z&to=2026-08-20T18:00:00Z', 50],
    ['phone + done + trash', 'calls?phone_number=%2B49300012345&done=false&include_deleted=true', 50],
    ['outcome (enum)', 'calls?extracted.urgency=emergency', 50],
    ['outcome (boolean) + done', 'calls?extracted.heating_issue=true&done=true', 50],
    ['outcome, cursor', 'calls?extracted.urgency=info&cursor=', 50],
    ['search (name, rare)', 'calls?search=zebulon&include_deleted=true', 200],
    ['search (number part)', 'calls?search=0012345', 200],
    ['search + done', 'calls?search=zebulon&done=false&include_deleted=true', 200],
    ['stats year by day', `calls/stats?${year}&interval=day&tz=Europe/Berlin`, 100],
    ['stats year, by outcome', `calls/stats?${year}&interval=day&tz=Europe/Berlin&group_by=extracted.urgency`, 100],
    ['small agent page 1', 'calls', 50],
  ];
  try {
    const baseUrl = `${baseline.url}/v1/agents/${big.agentId}`;
    const targets = queries.map(([name, path, target], i) => ({
      name,
      target,
      url: `${product.url}/v1/agents/${i === queries.length - 1 ? small.agentId : big.agentId}/${path}`,
      headers: { 'X-API-Key': i === queries.length - 1 ? small.key : big.key },
      runs: [] as autocannon.Result[],
      total: undefined as number | undefined,
      cpu: { product: 0, postgres: 0 },
    }));
    const baseRuns: autocannon.Result[] = [];
    for (const t of targets) {
      const res = await fetch(t.url, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${t.name}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { pagination?: { total: number }; totals?: { count: number } };
      t.total = body.pagination?.total ?? body.totals?.count;
      await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: 1 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      baseRuns.push(await load(baseUrl, { connections: CONNECTIONS, duration: SECONDS }));
      for (const t of targets) {
        const before = await cpuNow(db, product.pid);
        t.runs.push(await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: SECONDS }));
        const spent = cpuSpent(before, await cpuNow(db, product.pid));
        t.cpu.product += spent.product;
        t.cpu.postgres += spent.postgres;
      }
    }
    const failed = failures([...baseRuns, ...targets.flatMap((t) => t.runs)]);
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const base = summarize(baseRuns);
    const rows = targets.map((t) => {
      const summary = summarize(t.runs);
      const per = (ms: number) => Number((ms / Math.max(summary.requests, 1)).toFixed(2));
      return {
        name: t.name,
        total: t.total,
        target_p99_ms: t.target,
        ...summary,
        product_cpu_ms: per(t.cpu.product),
        postgres_cpu_ms: per(t.cpu.postgres),
      };
    });
    process.stdout.write(
      [
        `calls: ${total} calls, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product runs ${entry.runtime}`,
        `${'query'.padEnd(27)} ${pad('total', 8)} ${pad('req/s', 7)} ${pad('p50', 5)} ${pad('p99', 5)} ${pad('target', 6)} ${pad('cpu ms: node', 12)} ${pad('pg', 6)}  p99/baseline`,
        ...rows.map(
          (
            r: Summary & {
              name: string;
              total?: number;
              target_p99_ms: number;
              product_cpu_ms: number;
              postgres_cpu_ms: number;
            },
          ) =>
            `${r.name.padEnd(27)} ${pad(r.total ?? '', 8)} ${pad(r.rps, 7)} ${pad(r.p50, 5)} ${pad(r.p99, 5)} ${pad(`<=${r.target_p99_ms}`, 6)} ${pad(r.product_cpu_ms, 12)} ${pad(r.postgres_cpu_ms, 6)}  ${(r.p99 / Math.max(base.p99, 1)).toFixed(1)}x${r.p99 <= r.target_p99_ms ? '' : '  MISSED'}`,
        ),
        `${'baseline (one PK read)'.padEnd(27)} ${pad('', 8)} ${pad(base.rps, 7)} ${pad(base.p50, 5)} ${pad(base.p99, 5)}`,
        '',
      ].join('\n'),
    );
    const samples = rss.stop();
    options.rss?.push(...samples);
    if (LIST_ONLY) return { calls: total, runtime: entry.runtime, baseline: base, queries: rows };

    const taken = await measuredIntake(db, product, other.agentId, big.key);
    const exportTarget = (600 * total) / 10_000_000;
    const exported = await timedExport(
      `${product.url}/v1/agents/${big.agentId}/calls/export?format=ndjson`,
      big.key,
      product.pid,
    );
    process.stdout.write(
      `export ndjson: ${exported.lines} lines, ${exported.mb} MB in ${exported.seconds.toFixed(1)} s (target <= ${exportTarget} s), ` +
        `product RSS +${exported.rss_growth_mb} MB (target <= 50)${missed(exported.seconds <= exportTarget && exported.rss_growth_mb <= 50)}\n`,
    );
    const erased = ERASURE ? await measureErasure(db, product.url, seed) : null;
    return {
      calls: total,
      seed_seconds: seeding?.seconds ?? null,
      seed_rows_seconds: seeding?.rowsSeconds ?? null,
      seed_vacuum_seconds: seeding?.vacuumSeconds ?? null,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      runtime: entry.runtime,
      baseline: base,
      queries: rows,
      product_rss_mb: { max: Math.max(...samples), samples: samples.length },
      intake: taken,
      export_ndjson: { ...exported, target_seconds: exportTarget },
      erasure: erased,
    };
  } finally {
    rss.stop();
    await product.stop();
    await baseline.stop();
  }
}
