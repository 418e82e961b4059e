import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

/**
 * The lossless property: any agent a bundle can describe, exported, imported into another
 * organization and exported again, gives the same bundle; applied to the agent it came from, it
 * changes nothing. fast-check generates the agents (every resource, secrets, references by name).
 */

/**
 * The thousand agents by default. Each run is five requests and about ninety statements:
 * one run at a time, this process and PostgreSQL take turns and each core idles half the time, so
 * the runs go in LANES independent fast-check checks over the one server (each with its own seed,
 * each shrinking its own counterexample). BUNDLE_PROPERTY_RUNS changes the count;
 * BUNDLE_PROPERTY_SEED (with BUNDLE_PROPERTY_PATH) replays one lane's failure as fast-check reports it.
 */
const RUNS = Number(process.env.BUNDLE_PROPERTY_RUNS ?? 1000);
const REPLAY = process.env.BUNDLE_PROPERTY_SEED;
const LANES = REPLAY === undefined ? 4 : 1;

let ctx: TestContext;
let a: World;
let b: World;
beforeAll(async () => {
  ctx = await createTestContext();
  a = await ctx.build.world();
  b = await ctx.build.world();
  // What bundles may name exists in both organizations.
  for (const w of [a, b]) {
    await ctx.build.freshAgent(w.orgId, 'Partner');
    await ctx.http
      .post(`/v1/organization/${w.orgId}/knowledge-base`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ title: 'Leitfaden', content: 'Immer freundlich' })
      .expect(201);
  }
});
afterAll(() => ctx.close());

const CHARS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZäöüÄÖÜß0123456789 .,:;!?-()€🔧\'"'];
/** Text as people write it: letters, umlauts, punctuation, an emoji; no whitespace at the ends (names are trimmed). */
const words = (max = 30) =>
  fc
    .array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: max })
    .map((cs) => cs.join('').trim())
    .filter((s) => s.length > 0);
const identifier = fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/);
const decimal = (min: number, max: number) =>
  fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((x) => (Object.is(x, -0) ? 0 : x));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const time = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 45)).map(([h, m]) => {
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
});
const phone = fc.integer({ min: 10_000_000, max: 99_999_999 }).map((n) => `+4930${n}`);

const schedule = fc.record({
  timezone: fc.constantFrom('Europe/Berlin', 'Europe/Vienna', 'UTC'),
  rules: fc.array(
    fc.record({
      days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }),
      start_time: time,
      end_time: time,
    }),
    { maxLength: 3 },
  ),
  exceptions: fc.uniqueArray(fc.integer({ min: 1, max: 28 }), { maxLength: 3 }).chain((days) =>
    fc.tuple(
      ...days.map((d) =>
        fc.oneof(
          fc.record({
            date: fc.constant(`2027-02-${String(d).padStart(2, '0')}`),
            closed: fc.constant(true as const),
            note: words(20),
          }),
          fc.record({
            date: fc.constant(`2027-03-${String(d).padStart(2, '0')}`),
            rules: fc.array(fc.record({ start_time: time, end_time: time }), { minLength: 1, maxLength: 2 }),
          }),
        ),
      ),
    ),
  ),
});

const analysisFields = fc.uniqueArray(
  fc.oneof(
    fc.record({ name: identifier, type: fc.constantFrom('string', 'number', 'boolean', 'date') }),
    fc.record(
      {
        name: identifier,
        type: fc.constant('enum'),
        values: fc.uniqueArray(words(10), { minLength: 1, maxLength: 3 }),
        required: fc.boolean(),
        description: words(40),
      },
      { requiredKeys: ['name', 'type', 'values'] },
    ),
  ),
  { selector: (f) => f.name, maxLength: 3 },
);

const configuration = fc.record(
  {
    language: maybe(fc.constantFrom('de', 'en', 'fr', 'es')),
    formality: maybe(fc.constantFrom('formal', 'informal')),
    llm_provider: maybe(fc.constantFrom('openai', 'azure', 'groq')),
    llm_model: maybe(words(20)),
    llm_temperature: maybe(decimal(0, 2)),
    speaking_rate: maybe(decimal(0.5, 2)),
    stt_keywords: maybe(fc.array(words(15), { maxLength: 4 })),
    prompt: fc.oneof(fc.constant(''), words(200)),
    greeting: maybe(words(80)),
    greeting_variants: maybe(fc.array(fc.record({ greeting: words(40), tag: words(10) }), { maxLength: 2 })),
    post_call_webhook_url: maybe(
      fc.constantFrom('https://hooks.example.com/calls', 'https://hooks.example.com/calls?token=abc'),
    ),
    post_call_webhook_retries: fc.boolean(),
    schedule: maybe(schedule),
    bundesland: fc.constantFrom('DE', 'BY', 'NW', 'HH'),
    short_calls_auto_edit: fc.boolean(),
    track_caller_name: fc.boolean(),
    transfer_timeout_seconds: maybe(fc.integer({ min: 5, max: 45 })),
    background_audio_volume: decimal(0, 1),
    vacation_mode: fc.boolean(),
    vacation_end: maybe(fc.constantFrom('2027-01-06T00:00:00.000Z', '2027-08-31T22:00:00.000Z')),
    redact_pii: fc.subarray(['phone', 'email', 'iban', 'card', 'birthdate']),
    analysis_fields: analysisFields,
    backup_agent: maybe(fc.constant('Partner')),
  },
  { requiredKeys: [] },
);

const employees = fc.uniqueArray(
  fc.record({
    name: words(20),
    phone_number: maybe(phone),
    email: maybe(fc.constantFrom('max@example.com', 'buero@handwerk.de')),
    status: fc.constantFrom('anwesend', 'urlaub', 'krank'),
    active: fc.boolean(),
    get_mail: fc.boolean(),
    back_at_work_at: maybe(fc.constant('2027-01-07')),
  }),
  { selector: (e) => e.name, maxLength: 3 },
);

type GeneratedEmployee = { name: string; phone_number: string | null };

const tool = (staff: GeneratedEmployee[]) => {
  const withPhone = staff.filter((e) => e.phone_number !== null).map((e) => e.name);
  const transfer = withPhone.length
    ? fc.record({
        tool_type: fc.constant('transfer_call'),
        employee: fc.constantFrom(...withPhone),
        config: fc.constant({}),
      })
    : fc.record({ tool_type: fc.constant('transfer_call'), config: fc.record({ phone_number: phone }) });
  return fc.oneof(
    fc.record({
      tool_type: fc.constant('end_call'),
      config: fc.record({ goodbye_message: words(40) }, { requiredKeys: [] }),
    }),
    transfer,
    fc.record({
      tool_type: fc.constant('http_request'),
      config: fc.record({
        url: fc.constantFrom('https://crm.example.com/lookup', 'https://crm.example.com/lookup?api_key=k1'),
        method: fc.constantFrom('GET', 'POST'),
        headers: fc.subarray([
          { name: 'Authorization', value: 'Bearer s3cr3t' },
          { name: 'X-Tenant', value: 'nord' },
        ]),
      }),
    }),
    fc.record({
      tool_type: fc.constant('switch_agent'),
      config: fc.record({ target_agent: fc.constant('Partner'), ring_count: fc.integer({ min: 0, max: 3 }) }),
    }),
    fc.record({
      tool_type: fc.constant('knowledge_base'),
      config: fc.record({ top_k: fc.integer({ min: 1, max: 20 }) }),
    }),
  );
};

/** The secrets a generated bundle holds, by the names the export gives them. */
function secretsOf(bundle: {
  spec: { configuration: Record<string, unknown>; tools: { name: string; config: Record<string, unknown> }[] };
}) {
  const out: Record<string, string> = {};
  const url = bundle.spec.configuration.post_call_webhook_url;
  if (typeof url === 'string') out.post_call_webhook_url = url;
  for (const t of bundle.spec.tools) {
    if (typeof t.config.url === 'string') out[`tools.${t.name}.url`] = t.config.url;
    for (const h of (t.config.headers as { name: string; value: string }[] | undefined) ?? [])
      out[`tools.${t.name}.headers.${h.name}`] = h.value;
  }
  return out;
}

const bundleArb = fc.record({ name: words(40), configuration, employees }).chain(({ name, configuration, employees }) =>
  fc
    .record({
      tools: fc.uniqueArray(
        fc.record({
          name: identifier,
          description: words(60),
          priority: fc.integer({ min: 0, max: 10 }),
          is_enabled: fc.boolean(),
          spec: tool(employees),
        }),
        { selector: (t) => t.name, maxLength: 4 },
      ),
      slots: fc.uniqueArray(
        fc.record({
          slotnummer: fc.integer({ min: 1, max: 99 }).map((n) => String(n).padStart(2, '0')),
          cases: words(40),
          prioritaet_1: maybe(words(20)),
        }),
        { selector: (s) => s.slotnummer, maxLength: 3 },
      ),
      cases: fc.array(
        fc.record({
          name: words(30),
          accepting_calls: fc.boolean(),
          answered_by_agent: fc.constantFrom<string | null>('$self', 'Partner', null),
          transfer_employee: employees.length
            ? maybe(fc.constantFrom(...employees.map((e) => e.name)))
            : fc.constant(null),
        }),
        { maxLength: 3 },
      ),
      documents: fc.uniqueArray(
        fc.oneof(
          fc.record({ title: words(30), content: words(200) }),
          fc.record({
            title: words(30),
            content: fc.constant(''),
            chunks: fc.uniqueArray(
              fc.record(
                {
                  chunk_index: fc.integer({ min: 0, max: 50 }),
                  content: words(80),
                  token_count: fc.integer({ min: 1, max: 500 }),
                },
                { requiredKeys: ['chunk_index', 'content'] },
              ),
              { selector: (c) => c.chunk_index, maxLength: 3 },
            ),
          }),
        ),
        { selector: (d) => d.title, maxLength: 2 },
      ),
      granted: fc.subarray(['Leitfaden']),
      workflow: fc.boolean(),
    })
    .map(({ tools, slots, cases, documents, granted, workflow }) => ({
      api_version: 'voice-agent/v1',
      kind: 'Agent',
      name,
      spec: {
        configuration,
        workflow:
          workflow && tools.length
            ? {
                name: 'Ablauf',
                steps: [
                  {
                    id: 'start',
                    name: 'Start',
                    description: 'Begrüßen',
                    completion: 'fertig',
                    tools: tools.map((t) => t.name),
                    next: [{ id: 'ende' }],
                  },
                  { id: 'ende', name: 'Ende', description: 'Verabschieden', completion: 'fertig' },
                ],
              }
            : null,
        tools: tools.map(({ spec, ...t }) => ({ ...t, ...spec })),
        employees,
        forwarding_slots: slots,
        test_cases: cases.map((c) => ({
          name: c.name,
          input: { at: '2027-02-03T10:00:00+01:00' },
          expect: {
            accepting_calls: c.accepting_calls,
            answered_by_agent: c.answered_by_agent,
            transfer_employee: c.transfer_employee,
          },
        })),
        knowledge_base: { documents, organization_documents: granted },
      },
    })),
);

/** Agent phone numbers are unique: numbered in a range the builders' random Berlin numbers never use. */
let nextPhone = 0;
const agentPhone = () => `+4940${10_000_000 + nextPhone++}`;

const lossless = fc.asyncProperty(bundleArb, async (generated) => {
  const secrets = secretsOf(generated as never);
  const created = await ctx.http
    .post('/v1/agents/import')
    .set('X-API-Key', a.key)
    .send({ ...generated, secrets, phone_number: agentPhone() });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const source = created.body.id as string;
  const exported = (await ctx.http.get(`/v1/agents/${source}/bundle`).set('X-API-Key', a.key).expect(200)).body;

  const copy = await ctx.http
    .post('/v1/agents/import')
    .set('X-API-Key', b.key)
    .send({ ...exported, secrets, phone_number: agentPhone() });
  expect(copy.status, JSON.stringify(copy.body)).toBe(201);
  const again = (await ctx.http.get(`/v1/agents/${copy.body.id}/bundle`).set('X-API-Key', b.key).expect(200)).body;
  expect(again).toEqual(exported);

  const applied = await ctx.http.put(`/v1/agents/${source}/bundle`).set('X-API-Key', a.key).send(exported);
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  expect(applied.body).toEqual({ changes: [] });
});

describe('a bundle is lossless', () => {
  it(`export, import elsewhere, export again: equal; applied to its source: no changes (${RUNS} agents)`, async () => {
    const base = REPLAY === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(REPLAY);
    const path = process.env.BUNDLE_PROPERTY_PATH;
    const lanes = Array.from({ length: LANES }, (_, lane) => ({
      seed: base + lane,
      numRuns: Math.ceil((RUNS - lane) / LANES),
    })).filter((l) => l.numRuns > 0);
    // Every lane runs to its end before the test reports, so none is still writing when the file closes.
    const results = await Promise.allSettled(
      lanes.map(({ seed, numRuns }) => fc.assert(lossless, { seed, numRuns, ...(path ? { path } : {}) })),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }, 600_000);
});
