import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { WorkflowRecordSchema } from '../../src/modules/workflows/workflow.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const step = (id: string, next: string[], extra: Record<string, unknown> = {}) => ({
  id,
  name: `Schritt ${id}`,
  description: `Anweisung ${id}`,
  completion: `${id} erledigt`,
  next: next.map((n) => ({ id: n })),
  ...extra,
});
const workflow = (
  steps = [
    step('begruessung', ['anliegen']),
    step('anliegen', ['abschluss'], { tools: ['end_call'] }),
    step('abschluss', []),
  ],
) => ({
  name: 'Aufnahme',
  description: 'Nimmt Anliegen auf',
  steps,
});

async function agentWithTools(...names: string[]) {
  const agent = await ctx.build.agent(w.orgId);
  for (const name of names)
    await ctx
      .db('tools')
      .insert({ agent_id: agent.id, organization_id: w.orgId, name, tool_type: 'end_call', config: {} });
  return agent.id;
}
const stored = async (id: string) => ctx.db('agents').where({ id }).first('workflow', 'workflow_updated_at');
const put = (id: string, body: unknown, key = w.key) =>
  ctx.http
    .put(`/v1/agents/${id}/workflow`)
    .set('X-API-Key', key)
    .send(body as object);
const get = (id: string, key = w.key) => ctx.http.get(`/v1/agents/${id}/workflow`).set('X-API-Key', key);

describe('GET /v1/agents/{agentId}/workflow', () => {
  it('is null for a single-prompt agent, updated at its creation', async () => {
    const id = await agentWithTools();
    const { created_at } = await ctx.db('agents').where({ id }).first('created_at');
    const res = await get(id).expect(200);
    expect(res.body).toEqual({ agent_id: id, workflow: null, updated_at: created_at.toISOString() });
    expectSchema(res, WorkflowRecordSchema);
  });
});

describe('PUT /v1/agents/{agentId}/workflow', () => {
  it('stores the workflow object itself, with defaults filled, and GET returns it', async () => {
    const id = await agentWithTools('end_call');
    ctx.clock.set('2026-11-23T10:00:00Z');
    const res = await put(id, workflow()).expect(200);
    expectSchema(res, WorkflowRecordSchema);
    expect(res.body.agent_id).toBe(id);
    expect(res.body.updated_at).toBe('2026-11-23T10:00:00.000Z');
    expect(res.body.workflow.steps[0]).toEqual({
      ...step('begruessung', ['anliegen']),
      step_type: 'prompt',
      tools: [],
    });
    expect((await get(id).expect(200)).body).toEqual(res.body);
    expect((await stored(id)).workflow).toEqual(res.body.workflow);
  });

  it('accepts {workflow: Workflow} and {workflow: null} removes it', async () => {
    const id = await agentWithTools('end_call');
    ctx.clock.set('2026-11-23T10:00:00Z');
    await put(id, { workflow: workflow() }).expect(200);
    ctx.clock.set('2026-11-23T11:00:00Z');
    const res = await put(id, { workflow: null }).expect(200);
    expect(res.body).toEqual({ agent_id: id, workflow: null, updated_at: '2026-11-23T11:00:00.000Z' });
    expect((await stored(id)).workflow).toBeNull();
  });

  it('replaces the workflow completely', async () => {
    const id = await agentWithTools('end_call');
    await put(id, workflow()).expect(200);
    const res = await put(id, { name: 'Kurz', steps: [step('nur', [])] }).expect(200);
    expect(res.body.workflow).toEqual({
      name: 'Kurz',
      steps: [{ ...step('nur', []), step_type: 'prompt', tools: [] }],
    });
  });

  it('moves updated_at only when the workflow changes', async () => {
    const id = await agentWithTools('end_call');
    ctx.clock.set('2026-11-23T10:00:00Z');
    await put(id, workflow()).expect(200);
    ctx.clock.set('2026-11-23T12:00:00Z');
    expect((await put(id, workflow()).expect(200)).body.updated_at).toBe('2026-11-23T10:00:00.000Z');
    expect((await put(id, { ...workflow(), name: 'Neu' }).expect(200)).body.updated_at).toBe(
      '2026-11-23T12:00:00.000Z',
    );
  });

  it('lists every problem in one 400 with full paths and keeps the old workflow', async () => {
    const id = await agentWithTools('end_call');
    await put(id, workflow()).expect(200);
    const before = await stored(id);
    const res = await put(id, {
      workflow: {
        name: '',
        steps: [
          step('a', ['b'], { tools: ['end_call', 'send_sms'] }),
          step('b', ['nirgends', 'b']),
          step('b', [], { colour: 'red' }),
          step('c', []),
        ],
      },
    }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'name' }),
        { field: 'steps[0].tools[1]', message: '"send_sms" is not a tool of this agent' },
        { field: 'steps[1].next[0].id', message: 'No step with id "nirgends"' },
        { field: 'steps[1].next[1].id', message: 'A step cannot be its own next step' },
        { field: 'steps[2].id', message: 'Duplicate step id "b"' },
        { field: 'steps[2].colour', message: 'Unknown field' },
        { field: 'steps[3]', message: 'Step "c" is not reachable from the first step' },
      ]),
    );
    expect(res.body.error.details).toHaveLength(7);
    expect(await stored(id)).toEqual(before);
  });

  it('refuses a workflow without a terminal step', async () => {
    const id = await agentWithTools();
    const res = await put(id, workflow([step('a', ['b']), step('b', ['a'])])).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'steps', message: 'At least one step must be terminal (an empty next)' },
    ]);
    expect((await stored(id)).workflow).toBeNull();
  });

  it("accepts only the agent's own tools, not those of another agent", async () => {
    const id = await agentWithTools('lookup_order');
    await agentWithTools('end_call');
    const res = await put(id, workflow()).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'steps[1].tools[0]', message: '"end_call" is not a tool of this agent' },
    ]);
    await put(id, workflow([step('a', [], { tools: ['lookup_order'] })])).expect(200);
  });

  it('accepts 20 steps and refuses 21', async () => {
    const id = await agentWithTools();
    const chain = (n: number) => Array.from({ length: n }, (_, i) => step(`s${i}`, i + 1 < n ? [`s${i + 1}`] : []));
    await put(id, workflow(chain(20))).expect(200);
    const res = await put(id, workflow(chain(21))).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['steps']);
    expect((await stored(id)).workflow.steps).toHaveLength(20);
  });

  it('accepts 20 tools and 10 next steps in a step and refuses one more of each', async () => {
    const id = await agentWithTools('end_call');
    const fan = (n: number) => [
      step(
        'hub',
        Array.from({ length: n }, (_, i) => `t${i}`),
      ),
      ...Array.from({ length: n }, (_, i) => step(`t${i}`, [])),
    ];
    await put(id, workflow(fan(10))).expect(200);
    const tooMany = await put(id, workflow(fan(11))).expect(400);
    expect(tooMany.body.error.details).toEqual([expect.objectContaining({ field: 'steps[0].next' })]);
    await put(id, workflow([step('a', [], { tools: Array(20).fill('end_call') })])).expect(200);
    const tooManyTools = await put(id, workflow([step('a', [], { tools: Array(21).fill('end_call') })])).expect(400);
    expect(tooManyTools.body.error.details).toEqual([expect.objectContaining({ field: 'steps[0].tools' })]);
    expect((await stored(id)).workflow.steps[0].tools).toHaveLength(20);
  });

  it.each([
    [{ name: 'x'.repeat(101), steps: [step('a', [])] }, 'name'],
    [{ name: 'x', description: 'x'.repeat(501), steps: [step('a', [])] }, 'description'],
    [{ name: 'x', steps: [step('a'.repeat(51), [])] }, 'steps[0].id'],
    [{ name: 'x', steps: [step('a', [], { description: 'x'.repeat(20_001) })] }, 'steps[0].description'],
    [{ name: 'x', steps: [step('a', [], { completion: 'x'.repeat(501) })] }, 'steps[0].completion'],
    [{ name: 'x', steps: [step('a', [], { step_type: 'jump' })] }, 'steps[0].step_type'],
    [{ name: 'x', steps: [] }, 'steps'],
    [{ name: 'x', steps: [step('a', [])], owner: 'me' }, 'owner'],
    [{ workflow: null, extra: 1 }, 'extra'],
    [{ workflow: 'text' }, 'workflow'],
    [{}, 'steps'],
  ])('refuses %j naming %s', async (body, field) => {
    const id = await agentWithTools();
    const res = await put(id, body).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    expect((await stored(id)).workflow).toBeNull();
  });

  it('accepts each limit exactly', async () => {
    const id = await agentWithTools();
    await put(id, {
      name: 'x'.repeat(100),
      description: 'ü'.repeat(500),
      steps: [
        step('a'.repeat(50), [], {
          name: 'n'.repeat(100),
          description: 'd'.repeat(20_000),
          completion: 'c'.repeat(500),
          step_type: 'action',
        }),
      ],
    }).expect(200);
  });

  describe('access', () => {
    it('is 403 FORBIDDEN naming agents:write for a key that may only read, and writes nothing', async () => {
      const id = await agentWithTools();
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
      const res = await put(id, workflow([step('a', [])]), key.key).expect(403);
      expect(res.body.error.message).toBe('API key lacks required permission: agents:write');
      expect((await stored(id)).workflow).toBeNull();
      await get(id, key.key).expect(200);
    });

    it('is 403 FORBIDDEN naming agents:read on GET for a key without it', async () => {
      const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:write'] });
      expect((await get(w.agentId, key.key).expect(403)).body.error.message).toBe(
        'API key lacks required permission: agents:read',
      );
    });

    it('is 403 AGENT_NOT_ACCESSIBLE outside the key scope and writes nothing', async () => {
      const id = await agentWithTools();
      const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
      expect((await put(id, workflow([step('a', [])]), key.key).expect(403)).body.error.code).toBe(
        'AGENT_NOT_ACCESSIBLE',
      );
      expect((await get(id, key.key).expect(403)).body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
      expect((await stored(id)).workflow).toBeNull();
    });

    it('is 404 for an agent of another organization and writes nothing', async () => {
      const other = await ctx.build.world();
      await put(other.agentId, workflow([step('a', [])])).expect(404);
      await get(other.agentId).expect(404);
      expect((await stored(other.agentId)).workflow).toBeNull();
    });

    it('is 400 naming agentId when it is not a UUID', async () => {
      expect((await get('abc').expect(400)).body.error.details).toEqual([
        { field: 'agentId', message: 'Must be a UUID' },
      ]);
      expect((await put('abc', {}).expect(400)).body.error.details).toEqual([
        { field: 'agentId', message: 'Must be a UUID' },
      ]);
    });

    it('is 405 for another method on the workflow path', async () => {
      await ctx.http.delete(`/v1/agents/${w.agentId}/workflow`).set('X-API-Key', w.key).expect(405);
    });
  });
});
