import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

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
