import { afterAll, beforeAll, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

it('measures', async () => {
  const w = await ctx.build.world();
  const text = 'Lorem ipsum dolor sit amet '.repeat(200);
  await ctx.db.raw(
    `INSERT INTO calls (organization_id, agent_id, call_id, phone_number, customer_name, duration, done, transcript, extracted_data, created_at, updated_at)
     SELECT ?, ?, 'm-' || g, '+4930' || (1000000 + g), 'Kunde ' || g, 60, false,
            jsonb_build_array(jsonb_build_object('role','user','text', ? || g)), '{}'::jsonb, now(), now()
       FROM generate_series(1, 10000) g`,
    [w.orgId, w.agentId, text],
  );
  await ctx.db.raw('ANALYZE calls');
  await ctx.http.post(`/v1/agents/${w.agentId}/contacts`).set('X-API-Key', w.key)
    .send({ customer_name: 'Anna Schmidt', phone_number: '+49 170 1112223', email: 'anna@example.com' }).expect(201);
  const { DataSubjectRepository } = await import('../../src/modules/privacy/data-subject.repository.js');
  const repo = new DataSubjectRepository(ctx.db);
  const subject = await repo.resolve(w.orgId, { kind: 'phone_number', value: '+491701112223' });
  console.log(JSON.stringify(subject.textPatterns));
  const q = (repo as any).callsOf(subject, 'c').count({ n: '*' }).toString();
  const t = performance.now();
  const plan = await ctx.db.raw('EXPLAIN (ANALYZE, BUFFERS) ' + q.replace(/\?/g, '\\?'));
  console.log(Math.round(performance.now() - t), 'ms');
  console.log(plan.rows.map((r: any) => r['QUERY PLAN']).join('\n'));
}, 300_000);
