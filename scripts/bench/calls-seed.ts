/**
 * The calls scenario's data: one organization with a big agent of `total` calls over one year
 * (seeded with generate_series, reused by later runs) and a second agent that takes what the
 * scenarios write (intake, the erased person's calls), so the big agent holds exactly the seeded
 * calls run after run. Shared by the calls and erasure scenarios.
 */
import type { Knex } from 'knex';
import { pino } from 'pino';
import { PartitionMaintenance } from '../../src/db/partitions.js';
import { OpsRepository } from '../../src/ops/ops.repository.js';
import { analyse, OUTCOME_FIELDS, outcomesSql } from './analytics.js';
import { tenant, type Tenant } from './support.js';

/** The newest seeded call is at END; the oldest one year (31,000,000 s) before it, whatever their number. */
export const END = '2026-11-20T00:00:00Z';
const SPAN_SECONDS = 31_000_000;
/** Part of the organization's name: raised when seedSql changes, so that older seeds are not reused. */
const SEED_VERSION = 2;
/** Rows per seeding statement: a 10M seed is not one transaction of 10M rows. */
const SEED_CHUNK = 500_000;

/**
 * The chunks are inserted this many statements at once, each on its own connection: with the
 * search's trigram index in place, each core of PostgreSQL updates it for its share (1M calls on 2
 * cores: 37 s; one statement 64 s; one statement without the index and building it afterwards 57 s;
 * four statements 47 s).
 */
const SEED_STATEMENTS = 2;

/**
 * The id of a call created at `at` as the product makes it (src/db/time-ids.ts): a UUIDv7 whose
 * first 48 bits are `at` in Unix milliseconds, so lookups by id plan one month as for real calls.
 */
const timeIdSql = (at: string, random: string) =>
  `encode(set_byte(overlay(${random} placing substring(int8send(floor(extract(epoch FROM ${at}) * 1000)::bigint) FROM 3)
                          FROM 1 FOR 6), 6, (get_byte(${random}, 6) & 15) | 112), 'hex')::uuid`;

/**
 * One INSERT ... SELECT generate_series of calls `first`..`last`: names, requests, summaries, a
 * two-line transcript, typed outcomes, every 40th call trashed; call n is n * spacing s before END.
 * Through the product's table and its triggers, so the day, hour and outcome counters and call_keys
 * are filled as the intake fills them.
 */
export function seedSql(prefix: string, first: number, last: number, spacing: number): string {
  return `
  INSERT INTO calls (id, organization_id, agent_id, call_id, customer_name, customer_request, phone_number, duration, done,
                     general_success, call_summary, transcript, extracted_data, created_at, updated_at, deleted_at)
  SELECT ${timeIdSql('t.at', 'r.bytes')}, :org, :agent, '${prefix}-' || g,
    (ARRAY['Anna','Ben','Clara','David','Emma','Felix','Greta','Hans','Ida','Jonas'])[1 + g % 10] || ' ' ||
      CASE WHEN g % 10000 = 0 THEN 'Zebulon'
           ELSE (ARRAY['Müller','Schmidt','Schneider','Fischer','Weber','Meyer','Wagner','Becker','Schulz','Hoffmann','Koch','Richter'])[1 + (g / 10) % 12] END,
    (ARRAY['Termin verschieben','Rückruf erbeten','Rechnung unklar','Heizung defekt','Angebot anfragen'])[1 + g % 5],
    '+4930' || lpad((g % 50000)::text, 7, '0'), g % 600, g % 3 = 0, g % 4 <> 0,
    'Anrufer möchte ' || (ARRAY['einen neuen Termin','einen Rückruf','eine Erklärung der Rechnung','eine Reparatur','ein Angebot'])[1 + g % 5] || ', Vorgang ' || g,
    jsonb_build_array(jsonb_build_object('role','agent','text','Guten Tag, wie kann ich helfen?'),
                      jsonb_build_object('role','user','text',(ARRAY['Es geht um meinen Termin.','Bitte rufen Sie zurück.','Die Rechnung stimmt nicht.','Die Heizung ist kalt.','Ich hätte gern ein Angebot.'])[1 + g % 5])),
    ${outcomesSql('g')},
    t.at, t.at, CASE WHEN g % 40 = 0 THEN timestamptz '${END}' ELSE NULL END
  FROM generate_series(${first}, ${last}) g
  CROSS JOIN LATERAL (SELECT timestamptz '${END}' - g * interval '${spacing} seconds' AS at) t
  CROSS JOIN LATERAL (SELECT uuid_send(gen_random_uuid()) AS bytes) r`;
}

export type Seeding = { seconds: number; rowsSeconds: number; vacuumSeconds: number; statements: number };

/** The seeded organization: its big agent (and a key), and the agent that takes the scenarios' writes. */
export type CallsSeed = { big: Tenant; other: { agentId: string }; total: number; seeding: Seeding | null };

export const seedOrgName = (total: number) =>
  `Bench calls ${total === 1_000_000 ? '1M' : total} (seed ${SEED_VERSION})`;

/**
 * The seed of `total` calls: found and completed, or made. Each chunk is one statement, so a seed
 * that was stopped half-way (a 10M seed takes a while) goes on with the chunks whose first call is
 * missing instead of starting again.
 */
export async function seededCalls(db: Knex, total = 1_000_000): Promise<CallsSeed> {
  const name = seedOrgName(total);
  const spacing = SPAN_SECONDS / total;
  const ops = new OpsRepository(db);
  const existing = await db('organizations as o')
    .join('agents as a', 'a.organization_id', 'o.id')
    .join('memberships as m', 'm.organization_id', 'o.id')
    .where({ 'o.name': name, 'a.name': `${name} agent` })
    .orderBy('o.created_at', 'desc')
    .first('o.id as org', 'a.id as agent', 'm.user_id as user');
  let big: Tenant;
  if (existing) {
    const key = await ops.createApiKey({
      organizationId: existing.org,
      userId: existing.user,
      rateLimitPerMinute: 2_000_000_000,
      rateLimitPerHour: 2_000_000_000,
    });
    big = { orgId: existing.org, userId: existing.user, agentId: existing.agent, key: key.key };
  } else big = await tenant(db, name, { analysis_fields: JSON.stringify(OUTCOME_FIELDS) });
  const otherName = `${name} writes`;
  const other =
    (await db('agents').where({ organization_id: big.orgId, name: otherName }).first('id')) ??
    (await ops.createAgent(big.orgId, {
      name: otherName,
      phone_number: `+4940${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`,
      prompt: 'x'.repeat(2000),
      analysis_fields: JSON.stringify(OUTCOME_FIELDS),
    }));

  const chunk = Math.min(SEED_CHUNK, Math.ceil(total / SEED_STATEMENTS));
  const missing: [number, number][] = [];
  for (let first = 1; first <= total; first += chunk) {
    const done = await db('call_keys')
      .where({ agent_id: big.agentId, call_id: `seed-${first}` })
      .first('call_id');
    if (!done) missing.push([first, Math.min(total, first + chunk - 1)]);
  }
  let seeding: Seeding | null = null;
  if (missing.length) {
    const started = Date.now();
    // The year's monthly partitions first: rows of a month without one would land in the default partition.
    await new PartitionMaintenance(db, pino({ level: 'warn' })).ensure(
      new Date(),
      new Date(Date.parse(END) - SPAN_SECONDS * 1000),
    );
    const queue = [...missing];
    const next = async (): Promise<void> => {
      const range = queue.shift();
      if (!range) return;
      await db.raw(seedSql('seed', range[0], range[1], spacing), { org: big.orgId, agent: big.agentId });
      await next();
    };
    await Promise.all(Array.from({ length: SEED_STATEMENTS }, () => next()));
    const inserted = Date.now();
    // Statistics for the planner and the counters, and the trigram index's pending entries merged into it.
    await analyse(db);
    const finished = Date.now();
    seeding = {
      seconds: (finished - started) / 1000,
      rowsSeconds: (inserted - started) / 1000,
      vacuumSeconds: (finished - inserted) / 1000,
      statements: missing.length,
    };
  }
  // Only the seed writes to the big agent; anything else means the seed is not what it claims.
  const count = Number(
    (await db('call_day_counts').where({ agent_id: big.agentId }).sum({ n: 'calls' }).first())?.n ?? 0,
  );
  if (count !== total)
    throw new Error(`${name}: the big agent has ${count} calls, not ${total}; drop the organization and seed again`);
  return { big, other: { agentId: other.id }, total, seeding };
}
