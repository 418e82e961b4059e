/**
 * webhooks: call intake at BENCH_WEBHOOK_RATE calls/s (100) for BENCH_WEBHOOK_SECONDS (60) across
 * 10 organizations, each with its agent's post_call_webhook_url on a local receiver. Latency is
 * from the intake's response to the signed request arriving; every call must arrive exactly once.
 * A warm-up phase right after start (BENCH_WEBHOOK_WARMUP_SECONDS, 10) is reported apart; phase two
 * repeats the measured phase with one organization's receiver never answering.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { f, pad, percentile, productEntry, startProduct, tenant, type Tenant } from './support.js';

const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 60);
/**
 * A phase at the same rate right after start, reported apart: the first seconds of a fresh process
 * (JIT, connection pools, pg-boss's first polls) are not the steady state the target is about.
 */
const WARMUP_SECONDS = Number(process.env.BENCH_WEBHOOK_WARMUP_SECONDS ?? 10);
const ORGS = 10;

type Phase = {
  name: string;
  offered: number;
  intake_p99_ms: number;
  delivery_p50_ms: number;
  delivery_p99_ms: number;
  delivery_p99_ms_other_orgs: number;
  deliveries_per_second: number;
  ratio_to_offered_rate: number;
  lost: number;
  /** The hanging organization's calls not yet sent when the phase ended (its receiver holds each for the timeout). */
  hanging_org_not_yet_sent: number;
  duplicated: number;
  intake_errors: number;
};

export async function webhooks(db: Knex, databaseUrl: string) {
  const arrivals = new Map<string, number[]>();
  let hangOrg = -1;
  const hanging = new Set<ServerResponse>();
  const receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const org = Number(req.url?.split('/')[2]);
      try {
        const callId = JSON.parse(Buffer.concat(chunks).toString('utf8')).call.call_id as string;
        arrivals.set(callId, [...(arrivals.get(callId) ?? []), at]);
      } catch {
        // not a call.completed body: not counted
      }
      if (org === hangOrg) hanging.add(res);
      else res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  // Earlier runs' organizations go first (their calls, events and deliveries cascade), and what
  // they left is vacuumed now: autovacuum may be off (it is in this machine's CI configuration of
  // PostgreSQL), and dispatch and the job queue would read through every dead row of earlier runs.
  await db('organizations').where('name', 'like', 'Bench webhooks %').delete();
  const queues: { tablename: string }[] = await db('pg_tables').where({ schemaname: 'pgboss' }).select('tablename');
  const tables = [
    ...['events', 'webhook_deliveries', 'webhook_delivery_attempts', 'audit_log', 'calls'],
    ...queues.map((q) => `pgboss.${q.tablename}`),
  ];
  await db.raw(`VACUUM ANALYZE ${tables.map(() => '??').join(', ')}`, tables);
  const tenants: Tenant[] = [];
  for (let i = 0; i < ORGS; i++)
    tenants.push(
      await tenant(db, `Bench webhooks ${i}`, { post_call_webhook_url: `http://127.0.0.1:${port}/org/${i}/hook` }),
    );
  const entry = productEntry();
  const product = await startProduct(databaseUrl, { WORKERS_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const phases: Phase[] = [];
  try {
    for (const [name, hang, seconds] of [
      ['warm-up (after start)', -1, WARMUP_SECONDS],
      ['all receivers answer', -1, SECONDS],
      ['organization 0 never answers', 0, SECONDS],
    ] as const) {
      if (seconds <= 0) continue;
      hangOrg = hang;
      phases.push(await phase(name, seconds, product.url, tenants, arrivals, hang));
    }
  } finally {
    for (const res of hanging) res.destroy();
    await product.stop();
    receiver.closeAllConnections();
    receiver.close();
  }
  process.stdout.write(
    [
      `webhooks: ${RATE} calls/s for ${SECONDS} s per phase (after ${WARMUP_SECONDS} s of warm-up) across ${ORGS} organizations; product runs ${entry.runtime}`,
      `${'phase'.padEnd(30)} ${pad('intake p99', 10)} ${pad('deliv p50', 9)} ${pad('deliv p99', 9)} ${pad('others p99', 10)} ${pad('deliv/s', 8)} ${pad('lost', 5)} ${pad('dup', 4)} ${pad('hung org unsent', 15)}`,
      ...phases.map(
        (p) =>
          `${p.name.padEnd(30)} ${pad(p.intake_p99_ms, 10)} ${pad(p.delivery_p50_ms, 9)} ${pad(p.delivery_p99_ms, 9)} ${pad(p.delivery_p99_ms_other_orgs, 10)} ${pad(f(p.deliveries_per_second, 1), 8)} ${pad(p.lost, 5)} ${pad(p.duplicated, 4)} ${pad(p.hanging_org_not_yet_sent, 15)}`,
      ),
      `deliveries/s over offered calls/s: ${phases.map((p) => f(p.ratio_to_offered_rate)).join(', ')} (target: p99 <= 1000 ms, nothing lost or duplicated)`,
      '',
    ].join('\n'),
  );
  return {
    rate: RATE,
    seconds: SECONDS,
    warmup_seconds: WARMUP_SECONDS,
    organizations: ORGS,
    runtime: entry.runtime,
    phases,
  };
}

async function phase(
  name: string,
  seconds: number,
  url: string,
  tenants: Tenant[],
  arrivals: Map<string, number[]>,
  hangOrg: number,
): Promise<Phase> {
  const responded = new Map<string, { at: number; org: number }>();
  const intake: number[] = [];
  let errors = 0;
  const total = RATE * seconds;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const org = i % tenants.length;
    const t = tenants[org]!;
    const callId = `${name.replace(/\W/g, '')}-${Date.now()}-${i}`;
    inFlight.push(
      (async () => {
        const sent = performance.now();
        const res = await fetch(`${url}/v1/agents/${t.agentId}/calls`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-API-Key': t.key },
          body: JSON.stringify({ call_id: callId, duration: 42, customer_name: 'Bench', call_summary: 'Webhook load' }),
        }).catch(() => undefined);
        const at = performance.now();
        if (!res || res.status !== 201) errors += 1;
        else {
          await res.arrayBuffer();
          intake.push(at - sent);
          responded.set(callId, { at, org });
        }
      })(),
    );
  }
  await Promise.all(inFlight);
  // Wait for the deliveries still on their way (the hanging organization's never answer, but do arrive).
  const deadline = performance.now() + 30_000;
  while (
    performance.now() < deadline &&
    [...responded.entries()].some(([id, { org }]) => org !== hangOrg && !arrivals.has(id))
  )
    await new Promise((r) => setTimeout(r, 200));
  const latencies: number[] = [];
  const others: number[] = [];
  let lost = 0;
  let pending = 0;
  let duplicated = 0;
  const times: number[] = [];
  for (const [id, { at, org }] of responded) {
    const seen = arrivals.get(id);
    if (!seen) {
      if (org === hangOrg) pending += 1;
      else lost += 1;
      continue;
    }
    if (seen.length > 1) duplicated += 1;
    const latency = seen[0]! - at;
    latencies.push(latency);
    times.push(seen[0]!);
    if (org !== hangOrg) others.push(latency);
  }
  const span = (Math.max(...times) - started) / 1000;
  return {
    name,
    offered: total,
    intake_p99_ms: Math.round(percentile(intake, 99)),
    delivery_p50_ms: Math.round(percentile(latencies, 50)),
    delivery_p99_ms: Math.round(percentile(latencies, 99)),
    delivery_p99_ms_other_orgs: Math.round(percentile(others, 99)),
    deliveries_per_second: times.length / span,
    ratio_to_offered_rate: times.length / span / RATE,
    lost,
    hanging_org_not_yet_sent: pending,
    duplicated,
    intake_errors: errors,
  };
}
