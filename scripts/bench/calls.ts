/**
 * calls: one agent with 1,000,000 calls (seeded with generate_series, reused by later runs) and a
 * second agent with 1,000; p99 of the list by page and by cursor at depth, every filter and
 * combinations, and search, each in alternating rounds with the one-PK-read baseline server.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import { encodeCursor } from '../../src/api/pagination.js';
import { pino } from 'pino';
import { PartitionMaintenance } from '../../src/db/partitions.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import {
  failures,
  load,
  pad,
  productEntry,
  sampleRss,
  startServer,
  summarize,
  tenant,
  type Summary,
  type Tenant,
} from './support.js';

const SECONDS = Number(process.env.BENCH_CALLS_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_CALLS_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CALLS_CONNECTIONS ?? 4);
/** `--calls <n>`: how many calls the big agent has (1,000,000 by default), spread over the same year. */
let BIG = 1_000_000;
let SEED_ORG = 'Bench calls 1M';
const END = '2026-11-20T00:00:00Z';
/** The calls span 31,000,000 s (359 days) whatever their number: call n is n * SPACING s before END. */
let SPACING = 31;
/** Rows per seeding statement: a 10M seed is not one transaction of 10M rows. */
const SEED_CHUNK = 500_000;

/**
 * The million calls are inserted as this many statements at once, each on its own connection: with
 * the search's trigram index in place, each core of PostgreSQL updates it for its share (on 2 cores:
 * 37 s; one statement 64 s; one statement without the index and building it afterwards 57 s; four
 * statements 47 s).
 */
const SEED_STATEMENTS = 2;

/**
 * One INSERT ... SELECT generate_series of calls `first`..`last`: names, requests, summaries, a
 * two-line transcript, every 40th call trashed; call n is n * 31 s before END.
 */
function seedSql(prefix: string, first: number, last: number): string {
  return `
  INSERT INTO calls (organization_id, agent_id, call_id, customer_name, customer_request, phone_number, duration, done,
                     general_success, call_summary, transcript, created_at, updated_at, deleted_at)
  SELECT :org, :agent, '${prefix}-' || g,
    (ARRAY['Anna','Ben','Clara','David','Emma','Felix','Greta','Hans','Ida','Jonas'])[1 + g % 10] || ' ' ||
      CASE WHEN g % 10000 = 0 THEN 'Zebulon'
           ELSE (ARRAY['Müller','Schmidt','Schneider','Fischer','Weber','Meyer','Wagner','Becker','Schulz','Hoffmann','Koch','Richter'])[1 + (g / 10) % 12] END,
    (ARRAY['Termin verschieben','Rückruf erbeten','Rechnung unklar','Heizung defekt','Angebot anfragen'])[1 + g % 5],
    '+4930' || lpad((g % 50000)::text, 7, '0'), g % 600, g % 3 = 0, g % 4 <> 0,
    'Anrufer möchte ' || (ARRAY['einen neuen Termin','einen Rückruf','eine Erklärung der Rechnung','eine Reparatur','ein Angebot'])[1 + g % 5] || ', Vorgang ' || g,
    jsonb_build_array(jsonb_build_object('role','agent','text','Guten Tag, wie kann ich helfen?'),
                      jsonb_build_object('role','user','text',(ARRAY['Es geht um meinen Termin.','Bitte rufen Sie zurück.','Die Rechnung stimmt nicht.','Die Heizung ist kalt.','Ich hätte gern ein Angebot.'])[1 + g % 5])),
    timestamptz '${END}' - g * interval '${SPACING} seconds', timestamptz '${END}' - g * interval '${SPACING} seconds',
    CASE WHEN g % 40 = 0 THEN timestamptz '${END}' ELSE NULL END
  FROM generate_series(${first}, ${last}) g`;
}

type Seeding = { seconds: number; rowsSeconds: number; vacuumSeconds: number };

export async function seeded(db: Knex): Promise<{ big: Tenant; small: Tenant; seeding: Seeding | null }> {
  const existing = await db('organizations as o')
    .join('agents as a', 'a.organization_id', 'o.id')
    .join('memberships as m', 'm.organization_id', 'o.id')
    .where('o.name', SEED_ORG)
    .first('o.id as org', 'a.id as agent', 'm.user_id as user');
  const count = existing
    ? Number((await db('call_day_counts').where({ agent_id: existing.agent }).sum({ n: 'calls' }).first())?.n ?? 0)
    : 0;
  let big: Tenant;
  let seeding: Seeding | null = null;
  if (existing && count === BIG) {
    const key = await new OpsRepository(db).createApiKey({
      organizationId: existing.org,
      userId: existing.user,
      rateLimitPerMinute: 2_000_000_000,
      rateLimitPerHour: 2_000_000_000,
    });
    big = { orgId: existing.org, userId: existing.user, agentId: existing.agent, key: key.key };
  } else {
    big = await tenant(db, SEED_ORG);
    const started = Date.now();
    // The year's monthly partitions first: rows of a month without one would land in the default partition.
    await new PartitionMaintenance(db, pino({ level: 'warn' })).ensure(
      new Date(),
      new Date(Date.parse(END) - BIG * SPACING * 1000),
    );
    const chunks = Array.from({ length: Math.ceil(BIG / SEED_CHUNK) }, (_, i) => i);
    const next = async (): Promise<void> => {
      const i = chunks.shift();
      if (i === undefined) return;
      await db.raw(seedSql('seed', i * SEED_CHUNK + 1, Math.min(BIG, (i + 1) * SEED_CHUNK)), {
        org: big.orgId,
        agent: big.agentId,
      });
      await next();
    };
    await Promise.all(Array.from({ length: SEED_STATEMENTS }, () => next()));
    const inserted = Date.now();
    // Statistics for the planner, and the trigram index's pending entries merged into it.
    await db.raw('VACUUM ANALYZE calls');
    const done = Date.now();
    seeding = {
      seconds: (done - started) / 1000,
      rowsSeconds: (inserted - started) / 1000,
      vacuumSeconds: (done - inserted) / 1000,
    };
  }
  // Fresh in every run and never analysed: a newly busy agent, as the planner first sees one.
  const small = await tenant(db, 'Bench calls 1k');
  await db.raw(seedSql('small', 1, 1000), { org: small.orgId, agent: small.agentId });
  return { big, small, seeding };
}

export async function calls(db: Knex, databaseUrl: string, options: { rss?: number[]; total?: number } = {}) {
  if (options.total !== undefined && options.total !== 1_000_000) {
    BIG = options.total;
    SEED_ORG = `Bench calls ${options.total}`;
    SPACING = 31_000_000 / options.total;
  }
  const { big, small, seeding } = await seeded(db);
  if (seeding !== null)
    process.stdout.write(
      `calls: seeded ${BIG} calls with their indexes and statistics in ${seeding.seconds.toFixed(1)} s ` +
        `(rows and indexes ${seeding.rowsSeconds.toFixed(1)} s, VACUUM ANALYZE ${seeding.vacuumSeconds.toFixed(1)} s)\n`,
    );
  else process.stdout.write(`calls: reusing the seeded ${BIG} calls\n`);
  // Half-way down the big agent's calls (row 500,000 of 1M); a small --calls run still has such a row.
  const deepRow = Math.min(500_000, Math.floor(BIG / 2));
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
  const baseline = await startServer(['--import', 'tsx', 'scripts/bench/servers.ts', 'baseline'], env);
  const rss = sampleRss(product.pid);
  const queries: [string, string, number][] = [
    ['page 1', 'limit=20', 50],
    ['page 500', 'limit=20&page=500', 50],
    ['cursor= (start)', 'limit=20&cursor=', 10],
    [`cursor at row ${deepRow.toLocaleString('en')}`, `limit=20&cursor=${deepCursor}`, 10],
    ['done=true', 'done=true', 50],
    ['done=false, page 100', 'done=false&page=100', 50],
    ['include_deleted=true', 'include_deleted=true', 50],
    ['from/to (one month)', 'from=2026-06-01&to=2026-06-30', 50],
    ['from (date-time, open)', 'from=2026-09-15T12:34:56Z', 50],
    ['to (date-time)', 'to=2026-03-01T08:00:00Z', 50],
    ['phone_number', 'phone_number=%2B49300012345', 50],
    ['done + from/to', 'done=true&from=2026-02-10T06:00:00Z&to=2026-08-20T18:00:00Z', 50],
    ['phone + done + trash', 'phone_number=%2B49300012345&done=false&include_deleted=true', 50],
    ['search (name, rare)', 'search=zebulon&include_deleted=true', 200],
    ['search (number part)', 'search=0012345', 200],
    ['search + done', 'search=zebulon&done=false&include_deleted=true', 200],
    ['small agent page 1', '', 50],
  ];
  try {
    const baseUrl = `${baseline.url}/v1/agents/${big.agentId}`;
    const targets = queries.map(([name, query, target], i) => ({
      name,
      target,
      url: `${product.url}/v1/agents/${i === queries.length - 1 ? small.agentId : big.agentId}/calls?${query}`,
      headers: { 'X-API-Key': i === queries.length - 1 ? small.key : big.key },
      runs: [] as autocannon.Result[],
    }));
    const baseRuns: autocannon.Result[] = [];
    for (const t of targets) {
      const res = await fetch(t.url, { headers: t.headers });
      if (res.status !== 200) throw new Error(`${t.name}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { pagination: { total: number } };
      (t as { total?: number }).total = body.pagination.total;
      await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: 1 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      baseRuns.push(await load(baseUrl, { connections: CONNECTIONS, duration: SECONDS }));
      for (const t of targets)
        t.runs.push(await load(t.url, { headers: t.headers, connections: CONNECTIONS, duration: SECONDS }));
    }
    const failed = failures([...baseRuns, ...targets.flatMap((t) => t.runs)]);
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const base = summarize(baseRuns);
    const rows = targets.map((t) => ({
      name: t.name,
      total: (t as { total?: number }).total,
      target_p99_ms: t.target,
      ...summarize(t.runs),
    }));
    const samples = rss.stop();
    options.rss?.push(...samples);
    process.stdout.write(
      [
        `calls: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product runs ${entry.runtime}`,
        `${'query'.padEnd(26)} ${pad('total', 8)} ${pad('req/s', 7)} ${pad('p50', 5)} ${pad('p99', 5)} ${pad('target', 6)}  p99/baseline`,
        ...rows.map(
          (r: Summary & { name: string; total?: number; target_p99_ms: number }) =>
            `${r.name.padEnd(26)} ${pad(r.total ?? '', 8)} ${pad(r.rps, 7)} ${pad(r.p50, 5)} ${pad(r.p99, 5)} ${pad(`<=${r.target_p99_ms}`, 6)}  ${(r.p99 / Math.max(base.p99, 1)).toFixed(1)}x${r.p99 <= r.target_p99_ms ? '' : '  MISSED'}`,
        ),
        `${'baseline (one PK read)'.padEnd(26)} ${pad('', 8)} ${pad(base.rps, 7)} ${pad(base.p50, 5)} ${pad(base.p99, 5)}`,
        `product RSS max ${Math.max(...samples)} MB`,
        '',
      ].join('\n'),
    );
    return {
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
    };
  } finally {
    rss.stop();
    await product.stop();
    await baseline.stop();
  }
}
