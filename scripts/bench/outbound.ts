/**
 * outbound: a campaign of 10,000 recipients created in one request (target <= 2 s); 3 dialers
 * claiming and reporting 10,000 jobs (target >= 500 jobs/s in total); the latency of a claim with
 * 1,000,000 finished jobs in the table (target p99 <= 20 ms). The dialers do what docs/outbound.md
 * tells one to: report every job they got, and after a claim that answered `data: []` (the campaign
 * at its `max_concurrent` while the others' calls run) wait BENCH_OUTBOUND_IDLE_MS (20 by default)
 * before they poll again, instead of polling at once.
 *
 * Besides its figures it says how busy the dialers kept the campaign's 50 slots (jobs handed out and
 * not yet reported, on average, and the share of the time with none) and which tables autovacuum or
 * autoanalyze processed while they ran: what the dispatch rate also depends on.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import { publicHolidayOn } from '../../src/modules/agents/holidays.js';
import { zonedParts } from '../../src/modules/agents/zoned-time.js';
import { cpuMs, percentile, startProduct } from './support.js';

const RECIPIENTS = Number(process.env.BENCH_OUTBOUND_RECIPIENTS ?? 10_000);
const FINISHED = Number(process.env.BENCH_OUTBOUND_FINISHED ?? 1_000_000);
const IDLE_MS = Number(process.env.BENCH_OUTBOUND_IDLE_MS ?? 20);

/** A time zone in which it is now neither Sunday nor a nationwide German holiday, and not near midnight. */
function workingZone(): string {
  for (const zone of ['Europe/Berlin', 'Pacific/Pago_Pago', 'Pacific/Kiritimati', 'America/New_York', 'Asia/Tokyo']) {
    const parts = zonedParts(zone, Date.now());
    if (parts.weekday !== 0 && !publicHolidayOn('DE', parts.date) && parts.minute > 30 && parts.minute < 1380)
      return zone;
  }
  return 'Europe/Berlin';
}

async function world(db: Knex) {
  const ops = new OpsRepository(db);
  const org = await ops.createOrganization(`Outbound bench ${randomBytes(3).toString('hex')}`);
  const user = await ops.createUser(`outbound-${randomBytes(4).toString('hex')}@example.com`, 'Bench');
  await ops.addMember(user.id, org.id, 'developer_admin');
  // Calls are never placed on a Sunday or a public holiday: the agent lives in a zone where today is neither.
  const agent = await ops.createAgent(org.id, {
    name: 'Outbound',
    // Numbers are unique across the service: a fresh one per run, so the scenario runs again on the same database.
    phone_number: `+49301${String(randomBytes(4).readUInt32BE() % 10_000_000).padStart(7, '0')}`,
    schedule: {
      timezone: workingZone(),
      rules: [{ days: [0, 1, 2, 3, 4, 5, 6], start_time: '00:00', end_time: '23:59' }],
    },
  });
  const key = await ops.createApiKey({
    organizationId: org.id,
    userId: user.id,
    permissions: PERMISSIONS,
    rateLimitPerMinute: 10_000_000,
    rateLimitPerHour: 100_000_000,
  });
  return { orgId: org.id, agentId: agent.id, key: key.key };
}

/**
 * CPU time (ms) the database's server processes of this database have used so far, by pid: readable
 * when PostgreSQL runs on this machine (else empty). Connections that close in between are lost.
 */
async function backendCpu(db: Knex): Promise<Map<number, number>> {
  const { rows } = (await db.raw(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  )) as { rows: { pid: number }[] };
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = cpuMs(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}

export async function outbound(db: Knex, databaseUrl: string) {
  const w = await world(db);
  const product = await startProduct(databaseUrl, { OUTBOUND_MAX_CONCURRENT_PER_AGENT: '1000' });
  const headers = { 'X-API-Key': w.key, 'Content-Type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${product.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  try {
    const started = performance.now();
    const campaign = await post(`/v1/agents/${w.agentId}/campaigns`, {
      name: 'Bench',
      purpose: 'reminder',
      max_concurrent: 50,
      window: { days: [1, 2, 3, 4, 5, 6], from: '00:00', to: '24:00' },
      not_before: null,
      respect_opening_hours: false,
      recipients: Array.from({ length: RECIPIENTS }, (_, i) => ({
        to_number: `+4930${String(30_000_000 + i)}`,
        external_id: `bench-${i}`,
        variables: { name: `Kunde ${i}` },
      })),
    });
    const createMs = performance.now() - started;
    // The bench runs on any day: the jobs are made due now, whatever the calendar says.
    await db('outbound_jobs').where({ campaign_id: campaign.id }).update({ next_attempt_at: db.fn.now() });

    let handled = 0;
    let emptyClaims = 0;
    const claimMs: number[] = [];
    // Jobs handed out and not yet reported, integrated over time: how much of the campaign's
    // max_concurrent the dialers kept busy.
    let inFlight = 0;
    let inFlightSince = performance.now();
    let inFlightArea = 0;
    let noneInFlightMs = 0;
    const inFlightBy = (delta: number) => {
      const t = performance.now();
      inFlightArea += inFlight * (t - inFlightSince);
      if (inFlight === 0) noneInFlightMs += t - inFlightSince;
      inFlightSince = t;
      inFlight += delta;
    };
    const dialer = async () => {
      for (;;) {
        const t = performance.now();
        const { data } = (await post('/v1/outbound/claim', { max: 50, lease_seconds: 300 })) as {
          data: { attempt_id: string }[];
        };
        claimMs.push(performance.now() - t);
        if (data.length === 0) {
          emptyClaims++;
          if (handled >= RECIPIENTS) return;
          await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
          continue;
        }
        inFlightBy(data.length);
        await Promise.all(
          data.map(async (j) => {
            await post(`/v1/outbound/attempts/${j.attempt_id}/result`, { outcome: 'answered' });
            inFlightBy(-1);
          }),
        );
        handled += data.length;
      }
    };
    const serverCpuBefore = cpuMs(product.pid);
    const clientCpuBefore = process.cpuUsage();
    const dbCpuBefore = await backendCpu(db);
    const dispatchStartedAt = new Date();
    const dispatchStarted = performance.now();
    inFlightSince = dispatchStarted;
    await Promise.all([dialer(), dialer(), dialer()]);
    const dispatchSeconds = (performance.now() - dispatchStarted) / 1000;
    inFlightBy(0);
    const serverCpu = (cpuMs(product.pid) ?? NaN) - (serverCpuBefore ?? NaN);
    const clientCpuUsed = process.cpuUsage(clientCpuBefore);
    const clientCpu = (clientCpuUsed.user + clientCpuUsed.system) / 1000;
    let dbCpu = 0;
    for (const [pid, ms] of await backendCpu(db)) dbCpu += ms - (dbCpuBefore.get(pid) ?? 0);
    // Autovacuum and autoanalyze of this database while the dialers ran (they share the machine's CPU).
    const { rows: vacuumed } = (await db.raw(
      `SELECT relname || ':' || concat_ws('+',
                CASE WHEN last_autovacuum >= :from THEN 'vacuum' END,
                CASE WHEN last_autoanalyze >= :from THEN 'analyze' END) AS what
         FROM pg_stat_user_tables
        WHERE last_autovacuum >= :from OR last_autoanalyze >= :from ORDER BY relname`,
      { from: dispatchStartedAt },
    )) as { rows: { what: string }[] };

    // 1,000,000 finished jobs beside a few due ones: a claim must not notice them.
    await db.raw(
      `INSERT INTO outbound_jobs (organization_id, agent_id, to_number, purpose, status, "window", max_attempts,
                                  retry_after_minutes, finished_at, created_at, updated_at)
       SELECT :org, :agent, '+4930' || (40000000 + g), 'reminder', 'completed',
              '{"days":[1,2,3,4,5],"from":"09:00","to":"18:00"}', 3, 60, now(), now(), now()
         FROM generate_series(1, :n) g`,
      { org: w.orgId, agent: w.agentId, n: FINISHED },
    );
    await db.raw('ANALYZE outbound_jobs');
    const latencies: number[] = [];
    for (let i = 0; i < 200; i++) {
      await db('outbound_jobs').insert({
        organization_id: w.orgId,
        agent_id: w.agentId,
        to_number: `+4930${String(50_000_000 + i)}`,
        purpose: 'reminder',
        status: 'scheduled',
        window: JSON.stringify({ days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '24:00' }),
        respect_opening_hours: false,
        max_attempts: 1,
        retry_after_minutes: 60,
        next_attempt_at: db.fn.now(),
      });
      const t = performance.now();
      const { data } = (await post('/v1/outbound/claim', { max: 1, lease_seconds: 60 })) as {
        data: { attempt_id: string }[];
      };
      latencies.push(performance.now() - t);
      for (const j of data) await post(`/v1/outbound/attempts/${j.attempt_id}/result`, { outcome: 'answered' });
    }
    const result = {
      campaign_create_ms: Math.round(createMs),
      dispatch_jobs_per_second: Math.round(RECIPIENTS / dispatchSeconds),
      claim_p50_ms_under_load: Number(percentile(claimMs, 50).toFixed(1)),
      claims: claimMs.length,
      empty_claims: emptyClaims,
      jobs_in_flight_mean: Number((inFlightArea / (dispatchSeconds * 1000)).toFixed(1)),
      none_in_flight_share: Number((noneInFlightMs / (dispatchSeconds * 1000)).toFixed(3)),
      autovacuum_while_dispatching: vacuumed.map((r) => r.what).join(' '),
      // Per job handed out and reported, over the 3 dialers' run; the database's only when it runs here.
      server_cpu_ms_per_job: Number((serverCpu / RECIPIENTS).toFixed(2)),
      database_cpu_ms_per_job: Number((dbCpu / RECIPIENTS).toFixed(2)),
      // This process's: the three dialers' requests and answers.
      dialers_cpu_ms_per_job: Number((clientCpu / RECIPIENTS).toFixed(2)),
      claim_p99_ms_with_finished: Number(percentile(latencies, 99).toFixed(1)),
      claim_p50_ms_with_finished: Number(percentile(latencies, 50).toFixed(1)),
      finished_jobs: FINISHED,
    };
    console.log('outbound', result);
    return result;
  } finally {
    await product.stop();
  }
}
