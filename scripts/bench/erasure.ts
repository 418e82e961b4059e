/**
 * erasure: one person with 1,000 calls (and their 1,000 stored webhook bodies and a contact) among
 * the calls scenario's 1,000,000 of the same organization; the time of one erase request, and the
 * latency of call intake (sequential requests) while the erasure runs. Target: erase <= 2 s. The
 * person's calls and the intake go to the organization's second agent, so the seeded agent keeps
 * exactly its seed. The calls scenario runs the same measurement among its `--calls`.
 */
import type { Knex } from 'knex';
import { percentile, startProduct } from './support.js';
import { seededCalls, type CallsSeed } from './calls-seed.js';

const PERSON_CALLS = Number(process.env.BENCH_ERASURE_CALLS ?? 1000);
const PHONE = '+491701234567';
/**
 * The person's full name, which the erasure also looks for (their contact's name): one no seeded
 * call carries, so that the erasure touches the person's calls only and the seed stays as it was.
 */
const NAME = 'Quirin Zwanziger';

async function seedPerson(db: Knex, orgId: string, agentId: string): Promise<void> {
  const run = Date.now();
  await db.raw(
    `INSERT INTO calls (organization_id, agent_id, call_id, customer_name, customer_request, phone_number, duration,
                        done, call_summary, transcript, created_at, updated_at)
     SELECT :org, :agent, 'person-${run}-' || g, :name, 'Rückruf erbeten',
            CASE WHEN g % 2 = 0 THEN :phone ELSE '01701234567' END, 60 + g % 300, g % 3 = 0,
            'Quirin möchte einen Rückruf, Vorgang ' || g,
            jsonb_build_array(jsonb_build_object('role','user','text','Hier ist ' || :name::text || '.')),
            now() - g * interval '1 hour', now() - g * interval '1 hour'
       FROM generate_series(1, :n) g`,
    { org: orgId, agent: agentId, phone: PHONE, n: PERSON_CALLS, name: NAME },
  );
  await db.raw(
    `INSERT INTO events (organization_id, agent_id, type, payload, dispatched_at)
     SELECT c.organization_id, c.agent_id, 'call.completed',
            jsonb_build_object('event', 'call.completed', 'call', jsonb_build_object('id', c.id, 'phone_number', c.phone_number,
              'customer_name', c.customer_name, 'call_summary', c.call_summary, 'transcript', c.transcript::text)), now()
       FROM calls c WHERE c.agent_id = :agent AND c.call_id LIKE :prefix`,
    { agent: agentId, prefix: `person-${run}-%` },
  );
  await db('contacts').insert({
    organization_id: orgId,
    agent_id: agentId,
    customer_name: NAME,
    phone_number: PHONE,
  });
  await db.raw('ANALYZE calls; ANALYZE events');
}

export type ErasureResult = {
  person_calls: number;
  erase_ms: number;
  erased: Record<string, number>;
  repeat_ms: number;
  repeat_erased: Record<string, number>;
  intake_during_erase: { requests: number; p50_ms: number; max_ms: number };
};

/**
 * Seeds one person's calls in the seed's second agent, then erases the person through the product
 * at `productUrl` while calls are taken, and once more. Prints and returns the figures.
 */
export async function measureErasure(db: Knex, productUrl: string, seed: CallsSeed): Promise<ErasureResult> {
  const { big, other } = seed;
  await seedPerson(db, big.orgId, other.agentId);
  const headers = { 'X-API-Key': big.key, 'Content-Type': 'application/json' };
  const erase = async () => {
    const started = performance.now();
    const res = await fetch(`${productUrl}/v1/organization/${big.orgId}/data-subjects/erase`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ phone_number: '0170 1234567' }),
    });
    if (res.status !== 200) throw new Error(`erase: ${res.status} ${await res.text()}`);
    return { ms: performance.now() - started, body: (await res.json()) as { erased: Record<string, number> } };
  };
  let erasing = true;
  const intake: number[] = [];
  const intakeLoop = (async () => {
    for (let i = 0; erasing; i++) {
      const started = performance.now();
      const res = await fetch(`${productUrl}/v1/agents/${other.agentId}/calls`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ call_id: `intake-${Date.now()}-${i}`, phone_number: '+49301112223', duration: 30 }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`intake: ${res.status}`);
      intake.push(performance.now() - started);
    }
  })();
  const first = await erase().finally(() => (erasing = false));
  await intakeLoop;
  const again = await erase();
  const result = {
    person_calls: PERSON_CALLS,
    erase_ms: Math.round(first.ms),
    erased: first.body.erased,
    repeat_ms: Math.round(again.ms),
    repeat_erased: again.body.erased,
    intake_during_erase: {
      requests: intake.length,
      p50_ms: Math.round(percentile(intake, 50)),
      max_ms: Math.round(Math.max(0, ...intake)),
    },
  };
  process.stdout.write(
    `erasure: ${PERSON_CALLS} calls of one person among the ${seed.total.toLocaleString('en')}: erase ${result.erase_ms} ms (target <= 2000${result.erase_ms <= 2000 ? '' : ', MISSED'}), ` +
      `${JSON.stringify(result.erased)}; again ${result.repeat_ms} ms ${JSON.stringify(result.repeat_erased)}; ` +
      `intake during the erasure: ${intake.length} requests, p50 ${result.intake_during_erase.p50_ms} ms, max ${result.intake_during_erase.max_ms} ms\n\n`,
  );
  return result;
}

/** The erasure alone, among the calls scenario's seed of `total` calls (`--calls`, 1,000,000 by default). */
export async function erasure(db: Knex, databaseUrl: string, total?: number): Promise<ErasureResult> {
  const seed = await seededCalls(db, total);
  const product = await startProduct(databaseUrl);
  try {
    return await measureErasure(db, product.url, seed);
  } finally {
    await product.stop();
  }
}
