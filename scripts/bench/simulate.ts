/**
 * simulate: POST /v1/agents/{agentId}/simulate through the whole product (key check, rate limit,
 * scope check, the agent from the read cache, one query for backup, employees, slots and tools, one
 * for the caller's contact) next to the one-PK-read baseline, in alternating rounds; then POST
 * .../test-cases/run over 200 saved cases, timed one request at a time. The agent has what makes a
 * decision expensive: weekly hours, dated exceptions, a Bundesland with its holidays, greeting
 * variants, a backup, employees, forwarding slots and tools.
 */
import type autocannon from 'autocannon';
import type { Knex } from 'knex';
import {
  f,
  failures,
  load,
  pad,
  percentile,
  productEntry,
  ROUNDS,
  SECONDS,
  startServer,
  summarize,
  tenant,
} from './support.js';

const CONNECTIONS = Number(process.env.BENCH_SIMULATE_CONNECTIONS ?? 10);
const RUNS_PER_ROUND = Number(process.env.BENCH_SIMULATE_RUNS ?? 10);
const CASES = 200;
const CALLER = '+4917612345678';

/** The agent of this scenario; the route scenario routes calls to it too. */
export async function seed(db: Knex) {
  const schedule = {
    timezone: 'Europe/Berlin',
    rules: [
      { days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' },
      { days: [6], start_time: '09:00', end_time: '12:00' },
    ],
    exceptions: [
      { date: '2026-12-24', closed: true, note: 'Heiligabend' },
      { date: '2026-12-31', rules: [{ start_time: '09:00', end_time: '12:00' }], note: 'Silvester' },
    ],
  };
  const variants = [
    { greeting: 'Guten Morgen {{anrede}} {{nachname}}!', tag: 'vip', from: '06:00', to: '11:00' },
    { greeting: 'Gute Nacht', from: '22:00', to: '06:00' },
  ];
  const t = await tenant(db, 'Bench simulate', {
    schedule: JSON.stringify(schedule),
    bundesland: 'BY',
    greeting: 'Guten Tag, Praxis am Apparat',
    greeting_variants: JSON.stringify(variants),
  });
  const [backup] = await db('agents')
    .insert({
      organization_id: t.orgId,
      name: 'Vertretung',
      phone_number: `+4930${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`,
      prompt: '',
    })
    .returning('id');
  await db('agents').where({ id: t.agentId }).update({ backup_agent_id: backup.id, require_passing_test_cases: true });
  const employees = await db('employees')
    .insert(
      ['Max', 'Eva', 'Jan', 'Lea'].map((name, i) => ({
        agent_id: t.agentId,
        name,
        phone_number: `+493011122${i}`,
        status: i === 0 ? 'notdienst' : 'anwesend',
      })),
    )
    .returning('id');
  await db('forwarding_slots').insert(
    ['01', '02', '03'].map((slotnummer, i) => ({
      agent_id: t.agentId,
      slotnummer,
      cases: `Fall ${slotnummer}`,
      prioritaet_1: ['Max', 'Eva', '+4989123456'][i],
      prioritaet_2: 'Jan',
    })),
  );
  await db('tools').insert(
    ['end_call', 'zu_lea'].map((name) => ({
      agent_id: t.agentId,
      organization_id: t.orgId,
      name,
      tool_type: name === 'end_call' ? 'end_call' : 'transfer_call',
      employee_id: name === 'end_call' ? null : employees[3].id,
      config: name === 'end_call' ? {} : { phone_number: '+4930111223', transfer_mode: 'cold' },
    })),
  );
  await db('contacts').insert({
    agent_id: t.agentId,
    organization_id: t.orgId,
    first_name: 'Anna',
    last_name: 'Schmidt',
    salutation: 'Frau',
    mobile_number: CALLER,
    tags: ['vip'],
  });
  const now = new Date();
  await db('agent_test_cases').insert(
    Array.from({ length: CASES }, (_, i) => ({
      organization_id: t.orgId,
      agent_id: t.agentId,
      name: `Fall ${i}`,
      input: JSON.stringify({
        at: new Date(Date.UTC(2026, 11, 1 + (i % 31), i % 24, (i * 7) % 60)).toISOString(),
        ...(i % 3 === 0 ? { caller_number: CALLER } : {}),
      }),
      expect: JSON.stringify({ answered_by_agent_id: null }),
      created_at: now,
      updated_at: now,
    })),
  );
  return t;
}

export async function simulate(db: Knex, databaseUrl: string) {
  const t = await seed(db);
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
    const body = JSON.stringify({ at: '2026-12-24T19:30:00+01:00', caller_number: CALLER });
    const simulateUrl = `${product.url}/v1/agents/${t.agentId}/simulate`;
    const runUrl = `${product.url}/v1/agents/${t.agentId}/test-cases/run`;
    const targets = [
      { url: simulateUrl, method: 'POST' as const, body, runs: [] as autocannon.Result[] },
      {
        url: `${baseline.url}/v1/agents/${t.agentId}`,
        method: 'GET' as const,
        body: undefined,
        runs: [] as autocannon.Result[],
      },
    ];
    const check = await fetch(simulateUrl, { method: 'POST', headers, body });
    if (check.status !== 200) throw new Error(`simulate answered ${check.status}: ${await check.text()}`);
    for (const target of targets) await load(target.url, { ...target, headers, connections: CONNECTIONS, duration: 2 });
    const runMs: number[] = [];
    let runCases = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets)
        target.runs.push(await load(target.url, { ...target, headers, connections: CONNECTIONS, duration: SECONDS }));
      for (let i = 0; i < RUNS_PER_ROUND; i++) {
        const started = performance.now();
        const res = await fetch(runUrl, { method: 'POST', headers, body: '{}' });
        const result = (await res.json()) as { passed: number; failed: number };
        runMs.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`run answered ${res.status}`);
        runCases = result.passed + result.failed;
      }
    }
    const failed = failures(targets.flatMap((x) => x.runs));
    if (failed > 0) throw new Error(`${failed} failed or non-2xx answers`);
    const [sim, base] = targets.map((x) => summarize(x.runs)) as [
      ReturnType<typeof summarize>,
      ReturnType<typeof summarize>,
    ];
    const run = {
      cases: runCases,
      p50_ms: percentile(runMs, 50),
      p99_ms: percentile(runMs, 99),
      max_ms: Math.max(...runMs),
    };
    const result = {
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SECONDS,
      runtime: entry.runtime,
      simulate: sim,
      baseline: base,
      ratio_simulate_vs_baseline_rps: sim.rps / base.rps,
      run,
      targets: {
        'simulate p99 <= 20 ms': sim.p99 <= 20,
        'run of 200 cases p99 <= 500 ms': run.cases === CASES && run.p99_ms <= 500,
      },
    };
    const row = (name: string, r: { rps: number; p50: number; p99: number }) =>
      `${name.padEnd(26)} ${pad(r.rps, 8)} ${pad(r.p50, 7)} ${pad(r.p99, 7)}`;
    process.stdout.write(
      [
        `simulate: ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; product runs ${entry.runtime}`,
        `${'server'.padEnd(26)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)}`,
        row('product: POST simulate', sim),
        row('baseline (one PK read)', base),
        `ratio simulate/baseline ${f(result.ratio_simulate_vs_baseline_rps)}`,
        `run of ${run.cases} cases (${runMs.length} runs, one at a time): p50 ${f(run.p50_ms, 1)} ms, p99 ${f(run.p99_ms, 1)} ms, max ${f(run.max_ms, 1)} ms`,
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
