import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { ANALYSIS_FIELD_TYPES, type AnalysisFieldType } from '../../src/modules/agents/analysis-fields.js';
import { isCountedType } from '../../src/modules/calls/extracted-filters.js';

/**
 * The database decides which fields its triggers count (is_counted_outcome_type, used by
 * counted_outcome_names); the request path decides which filters the counters answer
 * (isCountedType). These tests fail when the two ever disagree on an analysis field type.
 */
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

/** One field and one stored value per type; a new type fails the typecheck here until it is added. */
const SAMPLES: Record<AnalysisFieldType, { field: Record<string, unknown>; value: unknown }> = {
  string: { field: {}, value: 'Vaillant' },
  number: { field: {}, value: 3 },
  boolean: { field: {}, value: true },
  enum: { field: { values: ['emergency', 'routine'] }, value: 'emergency' },
  date: { field: {}, value: '2026-12-01' },
};
const nameOf = (type: AnalysisFieldType) => `field_${type}`;
const countedNames = ANALYSIS_FIELD_TYPES.filter(isCountedType).map(nameOf).sort();

describe('the counted-type rule', () => {
  it('is the same in the database function and in isCountedType for every analysis field type', async () => {
    for (const type of ANALYSIS_FIELD_TYPES) {
      const { rows } = await ctx.db.raw('SELECT is_counted_outcome_type(?) AS counted', [type]);
      expect({ type, counted: rows[0].counted }).toEqual({ type, counted: isCountedType(type) });
    }
    const { rows } = await ctx.db.raw(
      `SELECT is_counted_outcome_type('text') AS unknown_type, is_counted_outcome_type(NULL) AS no_type`,
    );
    expect(rows[0]).toEqual({ unknown_type: false, no_type: false });
  });

  it('keeps counters for exactly the fields isCountedType names, on an agent with a field of every type', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const fields = ANALYSIS_FIELD_TYPES.map((type) => ({ name: nameOf(type), type, ...SAMPLES[type].field }));
    await ctx.http.patch(`/v1/agents/${agentId}`).set('X-API-Key', w.key).send({ analysis_fields: fields }).expect(200);
    const extracted = Object.fromEntries(ANALYSIS_FIELD_TYPES.map((type) => [nameOf(type), SAMPLES[type].value]));
    await ctx.http
      .post(`/v1/agents/${agentId}/calls`)
      .set('X-API-Key', w.key)
      .send({ call_id: `counted-rule-${Date.now()}`, duration: 60, extracted_data: extracted })
      .expect(201);

    const { rows: agent } = await ctx.db.raw(
      'SELECT counted_outcome_names(analysis_fields) AS names FROM agents WHERE id = ?',
      [agentId],
    );
    expect(agent[0].names).toEqual(countedNames);
    const counters = await ctx
      .db('call_outcome_hour_stats')
      .where({ agent_id: agentId })
      .distinct('name')
      .orderBy('name');
    expect(counters.map((r: { name: string }) => r.name)).toEqual(countedNames);
  });
});
