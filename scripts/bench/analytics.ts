/**
 * analytics: one agent with BENCH_ANALYTICS_CALLS calls (default 1,000,000, seeded with
 * generate_series and reused by later runs) carrying typed outcomes; p99 of the list with an enum and
 * a boolean filter, of statistics for a year by day (with and without group_by), each in alternating
 * rounds with the one-PK-read baseline server; then one full NDJSON and one full CSV export, timed,
 * with the product's RSS growth.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import {
  failures,
  load,
  pad,
  productEntry,
  rssMb,
  sampleRss,
  startServer,
  summarize,
  tenant,
  type Summary,
  type Tenant,
} from './support.js';

const SECONDS = Number(process.env.BENCH_ANALYTICS_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ANALYTICS_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_ANALYTICS_CONNECTIONS ?? 4);
const SIZE = Number(process.env.BENCH_ANALYTICS_CALLS ?? 1_000_000);
const SEED_ORG = `Bench analytics ${SIZE}`;
const END = '2026-11-20T00:00:00Z';
/** The agent's analysis fields: an enum and a boolean (both counted by hour), a number and a string. */
export const OUTCOME_FIELDS = [
  { name: 'urgency', type: 'enum', values: ['emergency', 'urgent', 'routine', 'info'] },
  { name: 'heating_issue', type: 'boolean' },
  { name: 'units', type: 'number' },
  { name: 'topic', type: 'string' },
];

/**
 * The typed outcomes of call `g` (a generate_series column): each enum value a quarter of the calls,
 * heating_issue true for a fifth.
 */
export const outcomesSql = (g: string) =>
  `jsonb_build_object('urgency', (ARRAY['emergency','urgent','routine','info'])[1 + ${g} % 4],
                       'heating_issue', ${g} % 5 = 0, 'units', ${g} % 40, 'topic', 'Thema ' || (${g} % 100))`;

/** Calls spread evenly over the year before END; outcomes cycle so that each enum value is a quarter. */
function seedSql(first: number, last: number): string {
  const step = Math.floor((365 * 86_400) / SIZE) || 1;
  return `
  INSERT INTO calls (organization_id, agent_id, call_id, customer_name, phone_number, duration, done, call_summary,
                     transcript, extracted_data, created_at, updated_at)
  SELECT :org, :agent, 'a-' || g, 'Caller ' || g, '+4930' || lpad((g % 50000)::text, 7, '0'), g % 600, g % 3 = 0,
    'Vorgang ' || g,
    jsonb_build_array(jsonb_build_object('role','user','text','Die Heizung ist kalt.')),
    ${outcomesSql('g')},
    timestamptz '${END}' - g * interval '${step} seconds', timestamptz '${END}' - g * interval '${step} seconds'
  FROM generate_series(${first}, ${last}) g`;
}

export async function seeded(db: Knex): Promise<{ big: Tenant; seedSeconds: number | null }> {
  const existing = await db('organizations as o')
    .join('agents as a', 'a.organization_id', 'o.id')
    .join('memberships as m', 'm.organization_id', 'o.id')
    .where('o.name', SEED_ORG)
    .first('o.id as org', 'a.id as agent', 'm.user_id as user');
  const count = existing
    ? Number((await db('call_day_counts').where({ agent_id: existing.agent }).sum({ n: 'calls' }).first())?.n ?? 0)
    : 0;
  if (existing && count === SIZE) {
    // An earlier run may have been stopped between its seed and the statistics.
    await analyse(db);
    const key = await new OpsRepository(db).createApiKey({
      organizationId: existing.org,
      userId: existing.user,
      rateLimitPerMinute: 2_000_000_000,
      rateLimitPerHour: 2_000_000_000,
    });
    return {
      big: { orgId: existing.org, userId: existing.user, agentId: existing.agent, key: key.key },
      seedSeconds: null,
    };
  }
  const big = await tenant(db, SEED_ORG, { analysis_fields: JSON.stringify(OUTCOME_FIELDS) });
  const started = Date.now();
  const half = Math.floor(SIZE / 2);
  await Promise.all([
    db.raw(seedSql(1, half), { org: big.orgId, agent: big.agentId }),
    db.raw(seedSql(half + 1, SIZE), { org: big.orgId, agent: big.agentId }),
  ]);
  await analyse(db);
  return { big, seedSeconds: (Date.now() - started) / 1000 };
}

/**
 * Statistics for the calls and the counters their triggers filled, as autovacuum gathers them a
 * while after a bulk load: without them the planner takes the counter tables for empty and sorts a
 * year of hour counters instead of hashing them (55 against 22 ms for a year grouped by a field).
 */
export async function analyse(db: Knex): Promise<void> {
  await db.raw('VACUUM ANALYZE calls, call_hour_stats, call_outcome_hour_stats, call_day_counts');
}

/** Downloads a whole export, counting lines, timing it and sampling the server's RSS meanwhile. */
export async function timedExport(url: string, key: string, pid: number) {
  const before = rssMb(pid) ?? 0;
  const rss = sampleRss(pid, 100);
  const started = Date.now();
  const res = await fetch(url, { headers: { 'X-API-Key': key } });
  if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  const seconds = (Date.now() - started) / 1000;
  const samples = rss.stop();
  return { seconds, lines, mb: Math.round(bytes / 1e6), rss_growth_mb: Math.max(before, ...samples) - before };
}

export async function analytics(db: Knex, databaseUrl: string) {
  const { big, seedSeconds } = await seeded(db);
  process.stdout.write(
    seedSeconds === null
      ? `analytics: reusing the seeded ${SIZE} calls\n`
      : `analytics: seeded ${SIZE} calls with outcomes in ${seedSeconds.toFixed(1)} s\n`,
  );
  const env = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WORKERS_ENABLED: 'false',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  };
  const entry = productEntry();
  const product = await startServer(entry.args, { ...entry.env, ...env });
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], env);
  const year = 'from=2025-11-20&to=2026-11-19';
  const queries: [string, string, number][] = [
    ['list enum filter', 'calls?extracted.urgency=emergency', 50],
    ['list boolean filter', 'calls?extracted.heating_issue=true', 50],
    ['list enum + done', 'calls?extracted.urgency=urgent&done=true', 50],
    ['list enum, cursor', 'calls?extracted.urgency=info&cursor=', 50],
    ['stats year by day', `calls/stats?${year}&interval=day&tz=Europe/Berlin`, 100],
    ['stats year by day, grouped', `calls/stats?${year}&interval=day&tz=Europe/Berlin&group_by=extracted.urgency`, 100],
    ['stats year by month, enum', `calls/stats?${year}&interval=month&extracted.urgency=emergency`, 100],
  ];
  try {
    const targets = queries.map(([name, query, target]) => ({
      name,
      target,
      url: `${product.url}/v1/agents/${big.agentId}/${query}`,
      headers: { 'X-API-Key': big.key },
      runs: [] as autocannon.Result[],
      total: undefined as number | undefined,
    }));
    for (const t of targets) {
      const res = await fetch(t.url, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${t.name}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { pagination?: { total: number }; totals?: { count: number } };
      t.total = body.pagination?.total ?? body.totals?.count;
      await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: 1 });
    }
    const baseRuns: autocannon.Result[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      baseRuns.push(
        await load(`${baseline.url}/v1/agents/${big.agentId}`, { connections: CONNECTIONS, duration: SECONDS }),
      );
      for (const t of targets)
        t.runs.push(await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: SECONDS }));
    }
    const failed = failures([...baseRuns, ...targets.flatMap((t) => t.runs)]);
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const base = summarize(baseRuns);
    const rows = targets.map((t) => ({ name: t.name, total: t.total, target_p99_ms: t.target, ...summarize(t.runs) }));
    const exportUrl = `${product.url}/v1/agents/${big.agentId}/calls/export`;
    const ndjson = await timedExport(`${exportUrl}?format=ndjson`, big.key, product.pid);
    const csv = await timedExport(`${exportUrl}?format=csv`, big.key, product.pid);
    process.stdout.write(
      [
        `analytics: ${SIZE} calls, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product runs ${entry.runtime}`,
        `${'query'.padEnd(30)} ${pad('total', 8)} ${pad('req/s', 7)} ${pad('p50', 5)} ${pad('p99', 5)} ${pad('target', 6)}  p99/baseline`,
        ...rows.map(
          (r: Summary & { name: string; total?: number; target_p99_ms: number }) =>
            `${r.name.padEnd(30)} ${pad(r.total ?? '', 8)} ${pad(r.rps, 7)} ${pad(r.p50, 5)} ${pad(r.p99, 5)} ${pad(`<=${r.target_p99_ms}`, 6)}  ${(r.p99 / Math.max(base.p99, 1)).toFixed(1)}x${r.p99 <= r.target_p99_ms ? '' : '  MISSED'}`,
        ),
        `${'baseline (one PK read)'.padEnd(30)} ${pad('', 8)} ${pad(base.rps, 7)} ${pad(base.p50, 5)} ${pad(base.p99, 5)}`,
        ...[
          ['export ndjson', ndjson],
          ['export csv', csv],
        ].map(
          ([name, e]) =>
            `${String(name).padEnd(14)} ${(e as typeof csv).lines} lines, ${(e as typeof csv).mb} MB in ${(e as typeof csv).seconds.toFixed(1)} s (target <= ${(60 * SIZE) / 1_000_000} s), RSS +${(e as typeof csv).rss_growth_mb} MB (target <= 50)`,
        ),
        '',
      ].join('\n'),
    );
    return {
      calls: SIZE,
      seed_seconds: seedSeconds,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      runtime: entry.runtime,
      baseline: base,
      queries: rows,
      export_ndjson: ndjson,
      export_csv: csv,
    };
  } finally {
    await product.stop();
    await baseline.stop();
  }
}
