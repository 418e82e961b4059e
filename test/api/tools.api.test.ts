import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolSchema } from '../../src/modules/tools/tool.schemas.js';
import { z } from '../../src/openapi/zod.js';
import type { World } from '../support/builders.js';
import { describeAgentSubResource } from '../support/access-matrix.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const base = (agentId: string) => `/v1/agents/${agentId}/tools`;

type Tool = { id: string; name: string; tool_type: string; config: Record<string, unknown>; [k: string]: unknown };
type Detail = { field: string; message: string };

/** A description is required on create; tests that are not about it get one. */
function create(agentId: string, body: Record<string, unknown>, key = w.key) {
  return ctx.http
    .post(base(agentId))
    .set('X-API-Key', key)
    .send({ description: 'A test tool', ...body });
}

function patch(agentId: string, toolId: string, body: Record<string, unknown>, key = w.key) {
  return ctx.http
    .patch(`${base(agentId)}/${toolId}`)
    .set('X-API-Key', key)
    .send(body);
}

async function toolRows(agentId: string): Promise<Tool[]> {
  return ctx.db('tools').where({ agent_id: agentId }).orderBy('name');
}

function fields(details: Detail[]): string[] {
  return details.map((d) => d.field).sort();
}

describe('POST /v1/agents/{agentId}/tools: the 14 types', () => {
  const other = { id: '' };
  beforeAll(async () => {
    other.id = await ctx.build.freshAgent(w.orgId);
  });

  const sentences = {
    confirm_calling_number: 'Darf ich Sie unter dieser Nummer erreichen?',
    ask_mobile: 'Wie lautet Ihre Mobilnummer?',
    ask_mobile_anonymous: 'Ihre Nummer ist unterdrückt. Wie lautet Ihre Mobilnummer?',
    ask_other_number: 'Unter welcher Nummer erreichen wir Sie?',
    ask_email: 'Wie lautet Ihre E-Mail-Adresse?',
    no_contact: 'Dann notiere ich Ihr Anliegen ohne Rückrufnummer.',
  };
  const minimal: Record<string, () => Record<string, unknown>> = {
    http_request: () => ({ url: 'https://crm.example.com/lookup' }),
    transfer_call: () => ({ phone_number: '+4930123456' }),
    monitored_transfer: () => ({ phone_number: '+4930123456' }),
    end_call: () => ({}),
    extract_variable: () => ({ variable_name: 'order_number' }),
    play_tone: () => ({ dtmf_digit: '1' }),
    knowledge_base: () => ({}),
    set_call_result: () => ({}),
    identify_caller: () => ({
      lookup_url: 'https://crm.example.com/lookup',
      fetch_case_url: 'https://crm.example.com/case',
    }),
    switch_agent: () => ({ target_agent_id: other.id }),
    verify_value: () => ({
      value: { name: 'plz', type: 'digits' },
      default_outcome: 'ok',
      outcomes: { ok: { say: 'Danke.' } },
    }),
    list_available_slots: () => ({ business_hours: { mon: [['08:00', '12:00']] } }),
    book_appointment: () => ({ business_hours: { fri: [['13:00', '17:00']] } }),
    resolve_contact: () => sentences,
  };

  it.each(Object.keys(minimal))('creates a %s tool with 201 and stores its effective config', async (toolType) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      name: `my_${toolType}`,
      tool_type: toolType,
      config: minimal[toolType]!(),
    }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      agent_id: agentId,
      name: `my_${toolType}`,
      display_name: null,
      description: 'A test tool',
      tool_type: toolType,
      config: expect.objectContaining(minimal[toolType]!()),
      is_enabled: true,
      priority: 0,
      employee_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const [row] = await toolRows(agentId);
    expect(row!.config).toEqual(res.body.config);
    expect(row).toMatchObject({ organization_id: w.orgId });
  });

  it('fills in the defaults of a type', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { name: 'kb', tool_type: 'knowledge_base' }).expect(201);
    expect(res.body.config).toEqual({ top_k: 5, similarity_threshold: 0.5 });
    const http = await create(agentId, {
      name: 'http',
      tool_type: 'http_request',
      config: { url: 'https://x.example' },
    }).expect(201);
    expect(http.body.config).toEqual({
      url: 'https://x.example',
      method: 'GET',
      headers: [],
      query_params: [],
      timeout: '5000',
      speak_during_execution: false,
      speak_after_execution: true,
    });
  });

  it.each([
    [
      'http_request',
      { url: 'https://x.example', method: 'FETCH', timeout: '50', headers: [{ name: 'Bad Header', value: 'x' }] },
      ['config.headers[0].name', 'config.method', 'config.timeout'],
    ],
    ['http_request', { method: 'GET' }, ['config.url']],
    [
      'transfer_call',
      { phone_number: 'call me', transfer_mode: 'hot' },
      ['config.phone_number', 'config.transfer_mode'],
    ],
    ['monitored_transfer', { phone_number: '+4930123', timeout_seconds: 600 }, ['config.timeout_seconds']],
    [
      'extract_variable',
      { variable_name: '1x', variable_type: 'colour', confirmation_enabled: 'yes' },
      ['config.confirmation_enabled', 'config.variable_name', 'config.variable_type'],
    ],
    ['extract_variable', {}, ['config.variable_name']],
    ['play_tone', { tone_type: 'beep', volume: 2 }, ['config.dtmf_digit', 'config.tone_type', 'config.volume']],
    ['knowledge_base', { top_k: 0, similarity_threshold: 1.5 }, ['config.similarity_threshold', 'config.top_k']],
    ['set_call_result', { fields: ['done'] }, ['config.fields']],
    ['identify_caller', { lookup_url: 'https://x.example' }, ['config.fetch_case_url']],
    ['switch_agent', { target_agent_id: 'abc', ring_count: 4 }, ['config.ring_count', 'config.target_agent_id']],
    [
      'verify_value',
      {
        value: { name: 'plz', type: 'digits' },
        rules: [{ match: 'in', values: ['1'], outcome: 'nope' }],
        default_outcome: 'ok',
        outcomes: {},
      },
      ['config.default_outcome', 'config.rules[0].outcome'],
    ],
    [
      'list_available_slots',
      { business_hours: { mon: [['12:00', '08:00']], xyz: [] }, duration_minutes: 10 },
      ['config.business_hours.mon[0]', 'config.business_hours.xyz', 'config.duration_minutes'],
    ],
    ['book_appointment', {}, ['config.business_hours']],
    ['end_call', { farewell_message: 'Tschüss' }, ['config.farewell_message']],
  ])('refuses an invalid %s config, naming every field: %j', async (toolType, config, expected) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { name: 'bad', tool_type: toolType, config }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(fields(res.body.error.details)).toEqual(expected);
    expect(await toolRows(agentId)).toEqual([]);
  });

  it('reports the fields, the config and the references of one request in one 400', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, {
      name: 'Bad Name',
      tool_type: 'transfer_call',
      priority: -1,
      config: { transfer_mode: 'hot' },
      employee_id: UNKNOWN,
    }).expect(400);
    expect(fields(res.body.error.details)).toEqual(['config.transfer_mode', 'employee_id', 'name', 'priority']);
    expect(res.body.error.details).toContainEqual({
      field: 'employee_id',
      message: 'Employee not found for this agent',
    });
  });

  it('refuses an unknown tool type and a missing name', async () => {
    const res = await create(w.agentId, { tool_type: 'teleport' }).expect(400);
    expect(fields(res.body.error.details)).toEqual(['name', 'tool_type']);
  });

  it('refuses a missing or empty description', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { name: 'x', tool_type: 'end_call', description: undefined }).expect(400);
    expect(fields(res.body.error.details)).toEqual(['description']);
    const empty = await create(agentId, { name: 'x', tool_type: 'end_call', description: ' ' }).expect(400);
    expect(fields(empty.body.error.details)).toEqual(['description']);
    expect(await toolRows(agentId)).toEqual([]);
  });
});

describe('tool names', () => {
  it('refuses a name the agent already uses with 409 and keeps one tool', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { name: 'hang_up', tool_type: 'end_call' }).expect(201);
    const res = await create(agentId, { name: 'hang_up', tool_type: 'knowledge_base' }).expect(409);
    expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'name', message: 'Already in use' }] });
    const rows = await toolRows(agentId);
    expect(rows.map((t) => t.tool_type)).toEqual(['end_call']);
  });

  it('lets two agents use the same name', async () => {
    await create(await ctx.build.freshAgent(w.orgId), { name: 'same', tool_type: 'end_call' }).expect(201);
    await create(await ctx.build.freshAgent(w.orgId), { name: 'same', tool_type: 'end_call' }).expect(201);
  });

  it.each(['1abc', 'Abc', 'with-dash', '', 'a'.repeat(101)])('refuses the name %j', async (name) => {
    const res = await create(w.agentId, { name, tool_type: 'end_call' }).expect(400);
    expect(fields(res.body.error.details)).toEqual(['name']);
  });
});

describe('transfer tools and employees', () => {
  async function employee(agentId: string, body: Record<string, unknown>): Promise<string> {
    const res = await ctx.http.post(`/v1/agents/${agentId}/employees`).set('X-API-Key', w.key).send(body).expect(201);
    return res.body.id;
  }

  it("takes the linked employee's phone number", async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employeeId = await employee(agentId, { name: 'Erika', phone_number: '+4930777' });
    const res = await create(agentId, {
      name: 'to_erika',
      tool_type: 'transfer_call',
      employee_id: employeeId,
      config: { transfer_mode: 'warm' },
    }).expect(201);
    expect(res.body).toMatchObject({
      employee_id: employeeId,
      config: { phone_number: '+4930777', transfer_mode: 'warm' },
    });
  });

  it('refuses a different phone number on an employee-linked tool with 409, on create and PATCH', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employeeId = await employee(agentId, { name: 'Erika', phone_number: '+4930777' });
    const refused = await create(agentId, {
      name: 'to_erika',
      tool_type: 'transfer_call',
      employee_id: employeeId,
      config: { phone_number: '+4989111112' },
    }).expect(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: [{ field: 'config.phone_number' }] });
    expect(await toolRows(agentId)).toEqual([]);
    const tool = await create(agentId, {
      name: 'to_erika',
      tool_type: 'transfer_call',
      employee_id: employeeId,
      config: { phone_number: '+49 30 777' },
    }).expect(201);
    await patch(agentId, tool.body.id, { config: { phone_number: '+4922112345' } }).expect(409);
    await patch(agentId, tool.body.id, { config: { play_hold_music: true } }).expect(200);
    expect((await toolRows(agentId))[0]!.config).toMatchObject({ phone_number: '+4930777', play_hold_music: true });
  });

  it('requires a phone number when no employee is linked', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { name: 't', tool_type: 'transfer_call' }).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'config.phone_number', message: 'Required unless the tool is linked to an employee (employee_id)' },
    ]);
  });

  it('refuses an employee of another agent, an employee without a phone, and a link on another tool type', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const foreign = await employee(await ctx.build.freshAgent(w.orgId), { name: 'Other', phone_number: '+4930888' });
    const noPhone = await employee(agentId, { name: 'Silent' });
    const own = await employee(agentId, { name: 'Own', phone_number: '+4930999' });
    const a = await create(agentId, { name: 'a', tool_type: 'transfer_call', employee_id: foreign }).expect(400);
    expect(a.body.error.details).toEqual([{ field: 'employee_id', message: 'Employee not found for this agent' }]);
    const b = await create(agentId, { name: 'b', tool_type: 'monitored_transfer', employee_id: noPhone }).expect(400);
    expect(b.body.error.details).toEqual([{ field: 'employee_id', message: 'The employee has no phone number' }]);
    const c = await create(agentId, { name: 'c', tool_type: 'end_call', employee_id: own }).expect(400);
    expect(c.body.error.details).toEqual([
      { field: 'employee_id', message: 'Only transfer_call and monitored_transfer tools can be linked to an employee' },
    ]);
    expect(await toolRows(agentId)).toEqual([]);
  });

  it('links and unlinks an employee by PATCH, keeping the last number', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employeeId = await employee(agentId, { name: 'Erika', phone_number: '+4930777' });
    const tool = await create(agentId, {
      name: 't',
      tool_type: 'transfer_call',
      config: { phone_number: '+4930111' },
    }).expect(201);
    const linked = await patch(agentId, tool.body.id, { employee_id: employeeId }).expect(200);
    expect(linked.body).toMatchObject({ employee_id: employeeId, config: { phone_number: '+4930777' } });
    const unlinked = await patch(agentId, tool.body.id, { employee_id: null }).expect(200);
    expect(unlinked.body).toMatchObject({ employee_id: null, config: { phone_number: '+4930777' } });
  });
});

describe('switch_agent targets', () => {
  it('accepts another agent of the same organization only', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const sibling = await ctx.build.freshAgent(w.orgId);
    const foreign = await ctx.build.world();
    await create(agentId, { name: 'ok', tool_type: 'switch_agent', config: { target_agent_id: sibling } }).expect(201);
    for (const [target, message] of [
      [foreign.agentId, 'Agent not found in this organization'],
      [UNKNOWN, 'Agent not found in this organization'],
      [agentId, 'Must be another agent than this one'],
    ] as const) {
      const res = await create(agentId, {
        name: 'bad',
        tool_type: 'switch_agent',
        config: { target_agent_id: target },
      }).expect(400);
      expect(res.body.error.details).toEqual([{ field: 'config.target_agent_id', message }]);
    }
    expect((await toolRows(agentId)).map((t) => t.name)).toEqual(['ok']);
  });

  it('refuses a key scoped to some agents a target outside its scope, existing or not, with the 403 it gets for that agent', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const inScope = await ctx.build.freshAgent(w.orgId);
    const outOfScope = await ctx.build.freshAgent(w.orgId);
    const { key } = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [agentId, inScope] });
    const direct = await ctx.http.get(`/v1/agents/${outOfScope}`).set('X-API-Key', key).expect(403);

    await create(agentId, { name: 'ok', tool_type: 'switch_agent', config: { target_agent_id: inScope } }, key).expect(
      201,
    );
    const answers = [];
    for (const target of [outOfScope, UNKNOWN]) {
      const res = await create(
        agentId,
        { name: 'bad', tool_type: 'switch_agent', config: { target_agent_id: target } },
        key,
      ).expect(403);
      answers.push(res.body.error);
    }
    const okTool = (await toolRows(agentId))[0]!;
    const moved = await patch(agentId, okTool.id, { config: { target_agent_id: outOfScope } }, key).expect(403);
    answers.push(moved.body.error);

    const { request_id: _id, ...expected } = direct.body.error;
    expect(expected.code).toBe('AGENT_NOT_ACCESSIBLE');
    for (const answer of answers) expect(answer).toMatchObject(expected);
    expect(JSON.stringify(answers)).not.toContain('not found');
    expect((await toolRows(agentId)).map((t) => [t.name, t.config.target_agent_id])).toEqual([['ok', inScope]]);
  });
});

describe('http_request URLs', () => {
  it.each([
    ['ftp://files.example.com/x', 'Only http and https URLs are allowed'],
    ['not a url', 'Must be a valid URL'],
    ['https://user:secret@api.example.com/', 'Credentials in the URL are not allowed'],
  ])('refuses %s', async (url, message) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await create(agentId, { name: 'h', tool_type: 'http_request', config: { url } }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'config.url', message }]);
    expect(await toolRows(agentId)).toEqual([]);
  });

  it('checks a changed URL on PATCH as well', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await create(agentId, {
      name: 'h',
      tool_type: 'http_request',
      config: { url: 'https://a.example' },
    }).expect(201);
    await patch(agentId, tool.body.id, { config: { url: 'file:///etc/passwd' } }).expect(400);
    expect((await toolRows(agentId))[0]!.config.url).toBe('https://a.example');
  });

  describe('when private targets are not allowed', () => {
    let strict: TestContext;
    let sw: World;
    beforeAll(async () => {
      strict = await createTestContext({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
      sw = await strict.build.world();
    });
    afterAll(() => strict.close());

    it.each([
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://10.1.2.3/',
      'http://[::ffff:127.0.0.1]/',
      'http://169.254.169.254/latest',
    ])('refuses %s', async (url) => {
      const res = await strict.http
        .post(base(sw.agentId))
        .set('X-API-Key', sw.key)
        .send({ name: 'h', description: 'd', tool_type: 'http_request', config: { url } })
        .expect(400);
      expect(res.body.error.details).toEqual([{ field: 'config.url', message: expect.any(String) }]);
    });

    it('accepts a public https URL', async () => {
      await strict.http
        .post(base(sw.agentId))
        .set('X-API-Key', sw.key)
        .send({
          name: 'public',
          description: 'd',
          tool_type: 'http_request',
          config: { url: 'https://api.example.com/v1' },
        })
        .expect(201);
    });
  });
});

describe('GET /v1/agents/{agentId}/tools', () => {
  it('lists every tool inside data, highest priority (lowest number) first, then by name', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { name: 'b_low', tool_type: 'end_call', priority: 10 }).expect(201);
    await create(agentId, { name: 'a_low', tool_type: 'end_call', priority: 10 }).expect(201);
    await create(agentId, { name: 'z_high', tool_type: 'end_call', priority: 1 }).expect(201);
    const res = await ctx.http.get(base(agentId)).set('X-API-Key', w.key).expect(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data.map((t: Tool) => t.name)).toEqual(['z_high', 'a_low', 'b_low']);
    expect(res.body.data[0]).not.toHaveProperty('organization_id');
  });
});

describe('PATCH /v1/agents/{agentId}/tools/{toolId}', () => {
  it('changes the given fields, merges and validates the config, ignores unknown fields', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await create(agentId, { name: 'kb', tool_type: 'knowledge_base', config: { top_k: 3 } }).expect(201);
    const res = await patch(agentId, tool.body.id, {
      display_name: 'Wissen',
      is_enabled: false,
      priority: 7,
      config: { similarity_threshold: 0.8 },
      organization_id: UNKNOWN,
      bogus: 1,
    }).expect(200);
    expect(res.body).toMatchObject({ name: 'kb', display_name: 'Wissen', is_enabled: false, priority: 7 });
    expect(res.body.config).toEqual({ top_k: 3, similarity_threshold: 0.8 });
  });

  it('refuses a change of tool_type but accepts the current one', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await create(agentId, { name: 'x', tool_type: 'end_call' }).expect(201);
    const res = await patch(agentId, tool.body.id, { tool_type: 'knowledge_base' }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'tool_type', message: 'The tool type cannot be changed' }]);
    await patch(agentId, tool.body.id, { tool_type: 'end_call', display_name: 'Ende' }).expect(200);
    expect((await toolRows(agentId))[0]!.tool_type).toBe('end_call');
  });

  it('validates a new config against the stored type and keeps the old one on failure', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await create(agentId, {
      name: 't',
      tool_type: 'transfer_call',
      config: { phone_number: '+4930111' },
    }).expect(201);
    const res = await patch(agentId, tool.body.id, { config: { transfer_mode: 'hot', url: 'https://x' } }).expect(400);
    expect(fields(res.body.error.details)).toEqual(['config.transfer_mode', 'config.url']);
    expect((await toolRows(agentId))[0]!.config).toEqual(tool.body.config);
  });

  it('refuses a rename onto a taken name with 409', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await create(agentId, { name: 'first', tool_type: 'end_call' }).expect(201);
    const second = await create(agentId, { name: 'second', tool_type: 'end_call' }).expect(201);
    await patch(agentId, second.body.id, { name: 'first' }).expect(409);
    expect((await toolRows(agentId)).map((t) => t.name)).toEqual(['first', 'second']);
  });
});

describe('tools named by the workflow', () => {
  async function agentWithWorkflow(toolNames: string[]): Promise<string> {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await ctx
      .db('agents')
      .where({ id: agentId })
      .update({
        workflow: JSON.stringify({
          name: 'Flow',
          steps: [
            { id: 'start', name: 'Start', description: 'd', completion: 'c', tools: [], next: [{ id: 'help' }] },
            { id: 'help', name: 'Help', description: 'd', completion: 'c', tools: toolNames, next: [] },
          ],
        }),
      });
    return agentId;
  }

  it('refuses to delete a tool the workflow names with 409 and keeps it', async () => {
    const agentId = await agentWithWorkflow(['transfer']);
    const tool = await create(agentId, {
      name: 'transfer',
      tool_type: 'transfer_call',
      config: { phone_number: '+4930111' },
    }).expect(201);
    const res = await ctx.http
      .delete(`${base(agentId)}/${tool.body.id}`)
      .set('X-API-Key', w.key)
      .expect(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      details: [{ field: 'name', message: 'Named in workflow steps: help' }],
    });
    expect(await toolRows(agentId)).toHaveLength(1);
  });

  it('refuses to rename a tool the workflow names with 409', async () => {
    const agentId = await agentWithWorkflow(['transfer']);
    const tool = await create(agentId, { name: 'transfer', tool_type: 'end_call' }).expect(201);
    await patch(agentId, tool.body.id, { name: 'renamed' }).expect(409);
    await patch(agentId, tool.body.id, { display_name: 'still fine' }).expect(200);
    expect((await toolRows(agentId)).map((t) => t.name)).toEqual(['transfer']);
  });

  it('deletes a tool the workflow does not name with 204 and no body', async () => {
    const agentId = await agentWithWorkflow(['other']);
    const tool = await create(agentId, { name: 'unused', tool_type: 'end_call' }).expect(201);
    const res = await ctx.http
      .delete(`${base(agentId)}/${tool.body.id}`)
      .set('X-API-Key', w.key)
      .expect(204);
    expect(res.text).toBe('');
    expect(await toolRows(agentId)).toEqual([]);
    await ctx.http
      .get(`${base(agentId)}/${tool.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
  });
});

let generatedTools = 0;
describeAgentSubResource(
  {
    segment: 'tools',
    noun: 'Tool',
    idParam: 'toolId',
    read: 'tools:read',
    write: 'tools:write',
    itemSchema: ToolSchema,
    listSchema: z.object({ data: z.array(ToolSchema) }),
    createBody: () => ({ name: `generated_${++generatedTools}`, tool_type: 'end_call', description: 'Generated' }),
    bodies: { patch: { display_name: 'Changed' } },
    state: (agentId) => toolRows(agentId),
    memberReads: true,
  },
  () => ({ ctx, w }),
);
