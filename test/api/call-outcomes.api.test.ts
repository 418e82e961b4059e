import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';
import { CallPageSchema } from '../../src/modules/calls/call.openapi.js';
import { CallSchema } from '../../src/modules/calls/call.schemas.js';
import { serializePayload } from '../../src/modules/webhooks/webhook-payload.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const FIELDS = [
  { name: 'urgency', type: 'enum', values: ['emergency', 'routine'], required: true },
  { name: 'heating_issue', type: 'boolean' },
  { name: 'units', type: 'number', description: 'Flats affected' },
  { name: 'visit_on', type: 'date' },
  { name: 'device', type: 'string' },
];

const agentPath = (agentId: string) => `/v1/agents/${agentId}`;

async function agentWithFields(world: World, fields: unknown[] = FIELDS): Promise<string> {
  const agentId = await ctx.build.freshAgent(world.orgId);
  await ctx.http.patch(agentPath(agentId)).set('X-API-Key', world.key).send({ analysis_fields: fields }).expect(200);
  return agentId;
}

describe('agent analysis_fields', () => {
  it('defaults to an empty list, is set by PATCH, read back and kept in a configuration version', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const before = await ctx.http.get(agentPath(agentId)).set('X-API-Key', w.key).expect(200);
    expect(before.body.analysis_fields).toEqual([]);

    const res = await ctx.http
      .patch(agentPath(agentId))
      .set('X-API-Key', w.key)
      .send({ analysis_fields: FIELDS })
      .expect(200);
    expectSchema(res, AgentSchema);
    expect(res.body.analysis_fields).toEqual(FIELDS);
    const read = await ctx.http.get(agentPath(agentId)).set('X-API-Key', w.key).expect(200);
    expect(read.body.analysis_fields).toEqual(FIELDS);

    const versions = await ctx.http
      .get(`${agentPath(agentId)}/versions`)
      .set('X-API-Key', w.key)
      .expect(200);
    const latest = versions.body.data[0].version as number;
    const diff = await ctx.http
      .get(`${agentPath(agentId)}/versions/${latest}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(diff.body.configuration.analysis_fields).toEqual(FIELDS);
  });

  it('is accepted on create', async () => {
    const res = await ctx.http
      .post('/v1/agents')
      .set('X-API-Key', w.key)
      .send({ name: 'With fields', phone_number: ctx.build.phone(), analysis_fields: FIELDS.slice(0, 1) })
      .expect(201);
    expect(res.body.analysis_fields).toEqual(FIELDS.slice(0, 1));
  });

  it('refuses bad names, duplicates, unknown types and misplaced values, naming each, and keeps the old fields', async () => {
    const agentId = await agentWithFields(w, FIELDS.slice(0, 2));
    const res = await ctx.http
      .patch(agentPath(agentId))
      .set('X-API-Key', w.key)
      .send({
        analysis_fields: [
          { name: 'Urgency', type: 'string' },
          { name: 'a', type: 'text' },
          { name: 'b', type: 'enum' },
          { name: 'c', type: 'number', values: ['x'] },
          { name: 'd', type: 'enum', values: [] },
          { name: 'b', type: 'boolean' },
          { name: 'e', type: 'string', colour: 'red' },
        ],
      })
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual([
      'analysis_fields[0].name',
      'analysis_fields[1].type',
      'analysis_fields[2].values',
      'analysis_fields[3].values',
      'analysis_fields[4].values',
      'analysis_fields[5].name',
      'analysis_fields[6].colour',
    ]);
    const row = await ctx.db('agents').where({ id: agentId }).first('analysis_fields');
    expect(row.analysis_fields).toEqual(FIELDS.slice(0, 2));
  });

  it('refuses more than 50 fields and a name longer than 40 characters', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `f${i}`, type: 'string' }));
    const res = await ctx.http
      .patch(agentPath(agentId))
      .set('X-API-Key', w.key)
      .send({ analysis_fields: many })
      .expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'analysis_fields' })]);
    const long = await ctx.http
      .patch(agentPath(agentId))
      .set('X-API-Key', w.key)
      .send({ analysis_fields: [{ name: `a${'b'.repeat(40)}`, type: 'string' }] })
      .expect(400);
    expect(long.body.error.details[0].field).toBe('analysis_fields[0].name');
  });
});

const callsPath = (agentId: string) => `/v1/agents/${agentId}/calls`;
let sequence = 0;
function callBody(fields: Record<string, unknown> = {}) {
  sequence += 1;
  return { call_id: `outcome-${sequence}-${Date.now()}`, duration: 60, customer_name: 'Erika', ...fields };
}

describe('extracted_data on calls', () => {
  it('is stored at intake, returned by GET and list, and carried by call.completed', async () => {
    const agentId = await agentWithFields(w);
    const extracted = {
      urgency: 'emergency',
      heating_issue: true,
      units: 3,
      visit_on: '2026-12-01',
      device: 'Vaillant',
    };
    const res = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ extracted_data: extracted }))
      .expect(201);
    expectSchema(res, CallSchema);
    expect(res.body.extracted_data).toEqual(extracted);

    const one = await ctx.http
      .get(`${callsPath(agentId)}/${res.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(one.body.extracted_data).toEqual(extracted);
    const list = await ctx.http.get(callsPath(agentId)).set('X-API-Key', w.key).expect(200);
    expectSchema(list, CallPageSchema);
    expect(list.body.data[0].extracted_data).toEqual(extracted);

    const [event] = await ctx.db('events').where({ agent_id: agentId, type: 'call.completed' }).select('payload');
    expect(event.payload.call.extracted_data).toEqual(extracted);
    const body = JSON.parse(serializePayload('call.completed', event.payload));
    expect(body.call.extracted_data).toEqual(extracted);
  });

  it('drops null values, and a call of an agent without fields carries an empty object', async () => {
    const agentId = await agentWithFields(w);
    const res = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ extracted_data: { urgency: 'routine', units: null } }))
      .expect(201);
    expect(res.body.extracted_data).toEqual({ urgency: 'routine' });
    const plain = await ctx.http.post(callsPath(w.agentId)).set('X-API-Key', w.key).send(callBody()).expect(201);
    expect(plain.body.extracted_data).toEqual({});
  });

  it('refuses an unknown name, a wrong type, an unlisted enum value, a bad date and a missing required field, storing nothing', async () => {
    const agentId = await agentWithFields(w);
    const res = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(
        callBody({
          call_id: 'refused-1',
          extracted_data: { colour: 'red', heating_issue: 'yes', units: '3', visit_on: '2026-02-30', device: 5 },
        }),
      )
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual([
      'extracted_data.colour',
      'extracted_data.device',
      'extracted_data.heating_issue',
      'extracted_data.units',
      'extracted_data.urgency',
      'extracted_data.visit_on',
    ]);
    const enumValue = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ call_id: 'refused-2', extracted_data: { urgency: 'whenever' } }))
      .expect(400);
    expect(enumValue.body.error.details).toEqual([
      { field: 'extracted_data.urgency', message: 'Must be one of: emergency, routine' },
    ]);
    const missing = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ call_id: 'refused-3' }))
      .expect(400);
    expect(missing.body.error.details).toEqual([{ field: 'extracted_data.urgency', message: 'Required' }]);
    const notObject = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ call_id: 'refused-4', extracted_data: ['emergency'] }))
      .expect(400);
    expect(notObject.body.error.details[0].field).toBe('extracted_data');
    expect(await ctx.db('calls').where({ agent_id: agentId }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await ctx.db('events').where({ agent_id: agentId, type: 'call.completed' }).count({ n: '*' })).toEqual([
      { n: 0 },
    ]);
  });

  it('is replaced by PATCH against the fields as they are then; a refused PATCH changes nothing', async () => {
    const agentId = await agentWithFields(w);
    const call = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ extracted_data: { urgency: 'routine', units: 1 } }))
      .expect(201);
    const patched = await ctx.http
      .patch(`${callsPath(agentId)}/${call.body.id}`)
      .set('X-API-Key', w.key)
      .send({ extracted_data: { urgency: 'emergency', heating_issue: false } })
      .expect(200);
    expectSchema(patched, CallSchema);
    expect(patched.body.extracted_data).toEqual({ urgency: 'emergency', heating_issue: false });

    const refused = await ctx.http
      .patch(`${callsPath(agentId)}/${call.body.id}`)
      .set('X-API-Key', w.key)
      .send({ done: true, extracted_data: { heating_issue: true } })
      .expect(400);
    expect(refused.body.error.details).toEqual([{ field: 'extracted_data.urgency', message: 'Required' }]);
    const row = await ctx.db('calls').where({ id: call.body.id }).first('extracted_data', 'done');
    expect(row).toEqual({ extracted_data: { urgency: 'emergency', heating_issue: false }, done: false });
  });

  it('keeps stored outcomes when the fields change later, and checks new writes against the new fields', async () => {
    const agentId = await agentWithFields(w);
    const call = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ extracted_data: { urgency: 'routine', device: 'Buderus' } }))
      .expect(201);
    await ctx.http
      .patch(agentPath(agentId))
      .set('X-API-Key', w.key)
      .send({ analysis_fields: [{ name: 'topic', type: 'string' }] })
      .expect(200);
    const read = await ctx.http
      .get(`${callsPath(agentId)}/${call.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(read.body.extracted_data).toEqual({ urgency: 'routine', device: 'Buderus' });
    const stale = await ctx.http
      .patch(`${callsPath(agentId)}/${call.body.id}`)
      .set('X-API-Key', w.key)
      .send({ extracted_data: { urgency: 'routine' } })
      .expect(400);
    expect(stale.body.error.details).toEqual([
      { field: 'extracted_data.urgency', message: 'Not an analysis field of this agent' },
    ]);
    await ctx.http.post(callsPath(agentId)).set('X-API-Key', w.key).send(callBody()).expect(201);
  });
});

describe('calls list filters extracted.<name>', () => {
  let agentId: string;
  // [urgency, heating_issue, units, visit_on, done]
  const seed: [string, boolean | null, number | null, string | null, boolean][] = [
    ['emergency', true, 1, '2026-12-01', false],
    ['emergency', false, 5, '2026-12-05', true],
    ['routine', true, 10, '2026-12-10', false],
    ['routine', null, null, null, false],
    ['emergency', true, 2.5, '2026-11-30', false],
  ];
  const ids: string[] = [];

  beforeAll(async () => {
    agentId = await agentWithFields(w);
    for (const [i, [urgency, heating, units, visit, done]] of seed.entries()) {
      const extracted: Record<string, unknown> = { urgency, heating_issue: heating, units, visit_on: visit };
      if (i === 1) extracted.device = 'Kessel Typ 5';
      ctx.clock.advance(1000);
      const res = await ctx.http
        .post(callsPath(agentId))
        .set('X-API-Key', w.key)
        .send(callBody({ extracted_data: extracted, done, customer_name: i === 4 ? 'Frau Heizmann' : 'Erika' }))
        .expect(201);
      ids.push(res.body.id);
    }
  });

  async function listed(query: string): Promise<{ ids: string[]; total: number }> {
    const res = await ctx.http
      .get(`${callsPath(agentId)}?${query}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expectSchema(res, CallPageSchema);
    return { ids: (res.body.data as { id: string }[]).map((c) => c.id), total: res.body.pagination.total };
  }
  const expected = (...indexes: number[]) => indexes.map((i) => ids[i]!).reverse();

  it('filters by enum, boolean, number, date and string equality with exact totals', async () => {
    expect(await listed('extracted.urgency=emergency')).toEqual({ ids: expected(0, 1, 4), total: 3 });
    expect(await listed('extracted.heating_issue=true')).toEqual({ ids: expected(0, 2, 4), total: 3 });
    expect(await listed('extracted.heating_issue=false')).toEqual({ ids: expected(1), total: 1 });
    expect(await listed('extracted.units=2.5')).toEqual({ ids: expected(4), total: 1 });
    expect(await listed('extracted.visit_on=2026-12-10')).toEqual({ ids: expected(2), total: 1 });
    expect(await listed(`extracted.device=${encodeURIComponent('Kessel Typ 5')}`)).toEqual({
      ids: expected(1),
      total: 1,
    });
  });

  it('takes [gte] and [lte] bounds for numbers and dates', async () => {
    expect(await listed('extracted.units[gte]=2.5&extracted.units[lte]=5')).toEqual({ ids: expected(1, 4), total: 2 });
    expect(await listed('extracted.units[gte]=6')).toEqual({ ids: expected(2), total: 1 });
    expect(await listed('extracted.visit_on[lte]=2026-12-01')).toEqual({ ids: expected(0, 4), total: 2 });
    expect(await listed('extracted.visit_on[gte]=2026-12-02&extracted.urgency=routine')).toEqual({
      ids: expected(2),
      total: 1,
    });
  });

  it('combines with done, search, from/to and cursor paging', async () => {
    expect(await listed('extracted.urgency=emergency&done=false')).toEqual({ ids: expected(0, 4), total: 2 });
    expect(await listed('extracted.urgency=emergency&search=heizmann')).toEqual({ ids: expected(4), total: 1 });
    expect(await listed('extracted.urgency=emergency&from=2000-01-01&to=2000-01-02')).toEqual({ ids: [], total: 0 });
    const first = await ctx.http
      .get(`${callsPath(agentId)}?extracted.urgency=emergency&limit=2&cursor=`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual(expected(1, 4));
    expect(first.body.pagination.total).toBe(3);
    const second = await ctx.http
      .get(`${callsPath(agentId)}?extracted.urgency=emergency&limit=2&cursor=${first.body.pagination.next_cursor}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(expected(0));
    expect(second.body.pagination.next_cursor).toBeNull();
    expect(await listed('extracted.urgency=emergency&page=2&limit=2')).toEqual({ ids: expected(0), total: 3 });
  });

  it('refuses unknown fields, bad values and bounds on other types, every problem in one 400', async () => {
    const res = await ctx.http
      .get(
        `${callsPath(agentId)}?extracted.colour=red&extracted.urgency=soon&extracted.units=many` +
          '&extracted.heating_issue[gte]=true&extracted.visit_on[lte]=tomorrow&extracted.units[ne]=1&done=maybe',
      )
      .set('X-API-Key', w.key)
      .expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual([
      'done',
      'extracted.colour',
      'extracted.heating_issue[gte]',
      'extracted.units',
      'extracted.units[ne]',
      'extracted.urgency',
      'extracted.visit_on[lte]',
    ]);
    const twice = await ctx.http
      .get(`${callsPath(agentId)}?extracted.urgency=routine&extracted.urgency=emergency`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(twice.body.error.details).toEqual([{ field: 'extracted.urgency', message: 'Must be given once' }]);
  });

  it('uses the GIN index for an equality filter', async () => {
    await ctx.db.raw('SET enable_seqscan = off');
    const { rows } = await ctx.db.raw(
      `EXPLAIN SELECT id FROM calls c WHERE c.extracted_data @> '{"urgency":"emergency"}'::jsonb`,
    );
    await ctx.db.raw('SET enable_seqscan = on');
    // calls is partitioned by month: each partition's copy of calls_extracted_data is named after it.
    expect(JSON.stringify(rows)).toMatch(/Index Scan on calls_\w*extracted_data/);
  });
});

describe('retention purge and outcomes', () => {
  it('removes the free-text outcomes with the personal data and keeps the typed ones', async () => {
    const agentId = (await ctx.build.agent(w.orgId, { retention_days: 1, analysis_fields: JSON.stringify(FIELDS) })).id;
    ctx.clock.set('2026-03-01T10:00:00Z');
    const created = await ctx.http
      .post(callsPath(agentId))
      .set('X-API-Key', w.key)
      .send(callBody({ extracted_data: { urgency: 'emergency', units: 2, device: 'Frau Müllers Therme' } }))
      .expect(201);
    ctx.clock.set('2026-03-05T10:00:00Z');
    await ctx.internals.callRetention.run();
    const res = await ctx.http
      .get(`${callsPath(agentId)}/${created.body.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body).toMatchObject({ is_purged: true, extracted_data: { urgency: 'emergency', units: 2 } });
    expect(res.body.extracted_data).not.toHaveProperty('device');
  });
});
