import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentVersionDiffSchema,
  AgentVersionSchema,
  AgentVersionSummarySchema,
} from '../../src/modules/agent-versions/agent-version.schemas.js';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

type Summary = { version: number; change: string; restored_from: number | null; actor: Record<string, unknown> };

const versions = (agentId: string) => `/v1/agents/${agentId}/versions`;

function send(method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: unknown, key = w.key) {
  const req = ctx.http[method](path).set('X-API-Key', key);
  return body === undefined ? req : req.send(body as object);
}

function workflow(steps: { id: string; tools?: string[]; next?: string[] }[]) {
  return {
    name: 'Support',
    steps: steps.map((s) => ({
      id: s.id,
      name: s.id,
      description: `Step ${s.id}`,
      completion: 'Done',
      tools: s.tools ?? [],
      next: (s.next ?? []).map((id) => ({ id })),
    })),
  };
}

/** An agent made through the API: version 1 is its creation. */
async function newAgent(): Promise<string> {
  const res = await send('post', '/v1/agents', { name: 'Versioned', phone_number: ctx.build.phone(), prompt: 'v1' });
  expect(res.status).toBe(201);
  expectSchema(res, AgentSchema);
  return res.body.id as string;
}

async function list(agentId: string, key = w.key): Promise<Summary[]> {
  const res = await ctx.http.get(versions(agentId)).query({ limit: '100' }).set('X-API-Key', key);
  expect(res.status).toBe(200);
  expectSchema(res, paginated(AgentVersionSummarySchema));
  return res.body.data;
}

describe('agent configuration versions', () => {
  it('records one version per change: create, PATCH, schedule, greeting variants, workflow, tools', async () => {
    const agentId = await newAgent();
    await send('patch', `/v1/agents/${agentId}`, { prompt: 'v2' }).expect(200);
    await send('patch', `/v1/agents/${agentId}`, {
      schedule: { timezone: 'Europe/Berlin', rules: [{ days: [1], start_time: '08:00', end_time: '17:00' }] },
    }).expect(200);
    await send('patch', `/v1/agents/${agentId}`, { greeting_variants: [{ greeting: 'Moin', tag: 'north' }] }).expect(
      200,
    );
    const tool = await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'hangup',
      tool_type: 'end_call',
      description: 'A test tool',
    }).expect(201);
    await send('patch', `/v1/agents/${agentId}/tools/${tool.body.id}`, { priority: 5 }).expect(200);
    await send('put', `/v1/agents/${agentId}/workflow`, workflow([{ id: 'a', tools: ['hangup'] }])).expect(200);
    await send('put', `/v1/agents/${agentId}/workflow`, { workflow: null }).expect(200);
    await send('delete', `/v1/agents/${agentId}/tools/${tool.body.id}`).expect(204);

    const data = await list(agentId);
    expect(data.map((v) => [v.version, v.change])).toEqual([
      [9, 'tool.deleted'],
      [8, 'workflow.replaced'],
      [7, 'workflow.replaced'],
      [6, 'tool.updated'],
      [5, 'tool.created'],
      [4, 'agent.updated'],
      [3, 'agent.updated'],
      [2, 'agent.updated'],
      [1, 'agent.created'],
    ]);
    for (const v of data) expectSchema({ body: v }, AgentVersionSummarySchema);
    const prefix = (await ctx.db('api_keys').where({ id: w.keyId }).first('key_prefix')).key_prefix;
    expect(data[0].actor).toEqual({ type: 'api_key', user_id: null, key_prefix: prefix });

    const v5 = await ctx.http
      .get(`${versions(agentId)}/5`)
      .set('X-API-Key', w.key)
      .expect(200);
    expectSchema(v5, AgentVersionSchema);
    expect(v5.body.configuration).toMatchObject({
      prompt: 'v2',
      greeting_variants: [{ greeting: 'Moin', tag: 'north' }],
      workflow: null,
      tools: [{ id: tool.body.id, name: 'hangup', tool_type: 'end_call', priority: 0 }],
    });
  });

  it("records a version when an employee's new number flows into a linked transfer tool", async () => {
    const agentId = await newAgent();
    const employee = await send('post', `/v1/agents/${agentId}/employees`, {
      name: 'Erika',
      phone_number: '+4930777',
    }).expect(201);
    await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'to_erika',
      tool_type: 'transfer_call',
      description: 'A test tool',
      employee_id: employee.body.id,
    }).expect(201);
    await send('patch', `/v1/agents/${agentId}/employees/${employee.body.id}`, { phone_number: '+4930888' }).expect(
      200,
    );
    const [latest] = await list(agentId);
    expect(latest).toMatchObject({ version: 3, change: 'tool.updated' });
    const v3 = await ctx.http
      .get(`${versions(agentId)}/3`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(v3.body.configuration.tools[0].config.phone_number).toBe('+4930888');
    // A change of the employee alone (no linked tool affected) is not a configuration change.
    await send('patch', `/v1/agents/${agentId}/employees/${employee.body.id}`, { name: 'Erika M.' }).expect(200);
    expect((await list(agentId)).length).toBe(3);
  });

  it('records nothing for a rejected change or an empty PATCH', async () => {
    const agentId = await newAgent();
    await send('patch', `/v1/agents/${agentId}`, { prompt: 5 }).expect(400);
    await send('patch', `/v1/agents/${agentId}`, {}).expect(200);
    await send('put', `/v1/agents/${agentId}/workflow`, workflow([{ id: 'a', tools: ['missing'] }])).expect(400);
    expect((await list(agentId)).map((v) => v.version)).toEqual([1]);
  });

  it('records the dashboard user as the actor', async () => {
    const agentId = await newAgent();
    await ctx.http
      .patch(`/v1/agents/${agentId}`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ prompt: 'by hand' })
      .expect(200);
    const [latest] = await list(agentId);
    expect(latest.actor).toEqual({ type: 'user', user_id: w.userId, key_prefix: null });
  });

  it('paginates newest first', async () => {
    const agentId = await newAgent();
    for (const p of ['a', 'b', 'c']) await send('patch', `/v1/agents/${agentId}`, { prompt: p }).expect(200);
    const res = await ctx.http.get(versions(agentId)).query({ limit: '2', page: '2' }).set('X-API-Key', w.key);
    expect(res.status).toBe(200);
    expectSchema(res, paginated(AgentVersionSummarySchema));
    expect(res.body.pagination).toEqual({ page: 2, limit: 2, total: 4, pages: 2 });
    expect(res.body.data.map((v: Summary) => v.version)).toEqual([2, 1]);
  });

  it('gives consecutive numbers to concurrent changes, each containing the ones before', async () => {
    const agentId = await newAgent();
    const names = ['t_a', 't_b', 't_c', 't_d', 't_e'];
    const results = await Promise.all(
      names.map((name) =>
        send('post', `/v1/agents/${agentId}/tools`, { name, tool_type: 'end_call', description: 'A test tool' }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const data = await list(agentId);
    expect(data.map((v) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    for (let n = 2; n <= 6; n++) {
      const v = await ctx.http
        .get(`${versions(agentId)}/${n}`)
        .set('X-API-Key', w.key)
        .expect(200);
      expect(v.body.configuration.tools).toHaveLength(n - 1);
    }
  });
});

describe('GET /v1/agents/{agentId}/versions/{a}/diff/{b}', () => {
  it('lists the changes with paths such as workflow.steps[1].next and tools by name', async () => {
    const agentId = await newAgent();
    await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'lookup',
      tool_type: 'http_request',
      description: 'A test tool',
      config: { url: 'https://crm.example.com/a' },
    }).expect(201);
    await send('put', `/v1/agents/${agentId}/workflow`, workflow([{ id: 'a', next: ['b'] }, { id: 'b' }])).expect(200);
    const toolId = (await ctx.db('tools').where({ agent_id: agentId, name: 'lookup' }).first('id')).id;
    await send('patch', `/v1/agents/${agentId}/tools/${toolId}`, {
      config: { url: 'https://crm.example.com/b' },
    }).expect(200);
    await send(
      'put',
      `/v1/agents/${agentId}/workflow`,
      workflow([{ id: 'a', next: ['b'] }, { id: 'b', next: ['c'] }, { id: 'c' }]),
    ).expect(200);
    await send('patch', `/v1/agents/${agentId}`, { prompt: 'v2' }).expect(200);

    const res = await ctx.http.get(`${versions(agentId)}/3/diff/6`).set('X-API-Key', w.key);
    expect(res.status).toBe(200);
    expectSchema(res, AgentVersionDiffSchema);
    const byPath = Object.fromEntries(res.body.changes.map((c: { path: string }) => [c.path, c]));
    expect(byPath['prompt']).toEqual({ op: 'changed', path: 'prompt', old_value: 'v1', new_value: 'v2' });
    expect(byPath['tools.lookup.config.url']).toMatchObject({ op: 'changed', new_value: 'https://crm.example.com/b' });
    expect(byPath['workflow.steps[1].next[0]']).toMatchObject({ op: 'added', new_value: { id: 'c' } });
    expect(byPath['workflow.steps[2]']).toMatchObject({ op: 'added' });

    const back = await ctx.http
      .get(`${versions(agentId)}/6/diff/3`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(back.body.changes.find((c: { path: string }) => c.path === 'prompt')).toMatchObject({
      old_value: 'v2',
      new_value: 'v1',
    });
    const same = await ctx.http
      .get(`${versions(agentId)}/4/diff/4`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(same.body.changes).toEqual([]);
  });

  it('is 404 for a missing version and 400 for a malformed one', async () => {
    const agentId = await newAgent();
    const missing = await ctx.http.get(`${versions(agentId)}/1/diff/99`).set('X-API-Key', w.key);
    expect(missing.status).toBe(404);
    const bad = await ctx.http.get(`${versions(agentId)}/0/diff/x`).set('X-API-Key', w.key);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['from', 'to']);
    expect((await ctx.http.get(`${versions(agentId)}/7`).set('X-API-Key', w.key)).status).toBe(404);
  });
});

describe('POST /v1/agents/{agentId}/versions/{n}/restore', () => {
  it('brings back fields, workflow and deleted tools (same ids), removes tools added since, as a new version', async () => {
    const agentId = await newAgent();
    const keep = await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'keep',
      tool_type: 'end_call',
      description: 'A test tool',
    }).expect(201);
    const gone = await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'gone',
      tool_type: 'end_call',
      description: 'A test tool',
    }).expect(201);
    await send('put', `/v1/agents/${agentId}/workflow`, workflow([{ id: 'a', tools: ['gone', 'keep'] }])).expect(200);
    await send('patch', `/v1/agents/${agentId}`, { prompt: 'restored prompt' }).expect(200);
    // Version 5 is the one to return to; then everything changes.
    await send('put', `/v1/agents/${agentId}/workflow`, { workflow: null }).expect(200);
    await send('delete', `/v1/agents/${agentId}/tools/${gone.body.id}`).expect(204);
    await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'added_later',
      tool_type: 'end_call',
      description: 'A test tool',
    }).expect(201);
    await send('patch', `/v1/agents/${agentId}/tools/${keep.body.id}`, { priority: 9 }).expect(200);
    await send('patch', `/v1/agents/${agentId}`, { prompt: 'changed', is_active: false }).expect(200);

    const res = await send('post', `${versions(agentId)}/5/restore`);
    expect(res.status).toBe(201);
    expectSchema(res, AgentVersionSchema);
    expect(res.body).toMatchObject({ version: 11, change: 'version.restored', restored_from: 5 });
    const v5 = await ctx.http
      .get(`${versions(agentId)}/5`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body.configuration).toEqual(v5.body.configuration);
    const diff = await ctx.http
      .get(`${versions(agentId)}/5/diff/11`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(diff.body.changes).toEqual([]);

    const agent = await ctx.http.get(`/v1/agents/${agentId}`).set('X-API-Key', w.key).expect(200);
    expect(agent.body).toMatchObject({ prompt: 'restored prompt', is_active: true });
    const tools = await ctx.db('tools').where({ agent_id: agentId }).orderBy('name').select('id', 'name', 'priority');
    expect(tools).toEqual([
      { id: gone.body.id, name: 'gone', priority: 0 },
      { id: keep.body.id, name: 'keep', priority: 0 },
    ]);
    const wf = await ctx.http.get(`/v1/agents/${agentId}/workflow`).set('X-API-Key', w.key).expect(200);
    expect(wf.body.workflow.steps[0].tools).toEqual(['gone', 'keep']);
  });

  it('refuses with 409 when the version no longer validates, and changes nothing', async () => {
    const agentId = await newAgent();
    const backup = await ctx.build.agent(w.orgId, { name: 'Backup' });
    await send('patch', `/v1/agents/${agentId}`, { backup_agent_id: backup.id }).expect(200);
    await send('patch', `/v1/agents/${agentId}`, { backup_agent_id: null, prompt: 'later' }).expect(200);
    await send('delete', `/v1/agents/${backup.id}`).expect(204);
    const before = await ctx.db('agents').where({ id: agentId }).first('prompt', 'backup_agent_id');

    const res = await send('post', `${versions(agentId)}/2/restore`);
    expect(res.status).toBe(409);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['backup_agent_id']);
    expect(await ctx.db('agents').where({ id: agentId }).first('prompt', 'backup_agent_id')).toEqual(before);
    expect((await list(agentId)).map((v) => v.version)).toEqual([3, 2, 1]);
  });

  it('needs agents:write to restore (and tools:write when tools change), agents:read to read', async () => {
    const agentId = await newAgent();
    await send('post', `/v1/agents/${agentId}/tools`, {
      name: 'x',
      tool_type: 'end_call',
      description: 'A test tool',
    }).expect(201);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read'] });
    expect((await ctx.http.get(versions(agentId)).set('X-API-Key', readOnly.key)).status).toBe(200);
    expect((await send('post', `${versions(agentId)}/1/restore`, undefined, readOnly.key)).status).toBe(403);
    const noTools = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['agents:read', 'agents:write'] });
    const res = await send('post', `${versions(agentId)}/1/restore`, undefined, noTools.key);
    expect(res.status).toBe(403);
    expect(await ctx.db('tools').where({ agent_id: agentId })).toHaveLength(1);
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['tools:read'] });
    expect((await ctx.http.get(versions(agentId)).set('X-API-Key', noRead.key)).status).toBe(403);
  });

  it('is 404 for another organization and 403 AGENT_NOT_ACCESSIBLE outside the key scope', async () => {
    const agentId = await newAgent();
    const other = await ctx.build.world();
    expect((await ctx.http.get(versions(agentId)).set('X-API-Key', other.key)).status).toBe(404);
    expect((await send('post', `${versions(agentId)}/1/restore`, undefined, other.key)).status).toBe(404);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [w.agentId] });
    const res = await ctx.http.get(versions(agentId)).set('X-API-Key', scoped.key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
  });
});
