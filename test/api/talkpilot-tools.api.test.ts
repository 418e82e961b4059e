import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { ToolSchema } from '../../src/modules/tools/tool.schemas.js';

// TalkPilot's documented tool bodies, sent as its clients send them.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const tools = (agentId: string) => `/v1/agents/${agentId}/tools`;
const post = (agentId: string, body: object) => ctx.http.post(tools(agentId)).set('X-API-Key', w.key).send(body);
const patch = (agentId: string, id: string, body: object) =>
  ctx.http
    .patch(`${tools(agentId)}/${id}`)
    .set('X-API-Key', w.key)
    .send(body);

describe('TalkPilot tool configs: all 14 types with the documented fields', () => {
  const target = { id: '' };
  beforeAll(async () => {
    target.id = await ctx.build.freshAgent(w.orgId);
  });

  const documented: Record<string, () => Record<string, unknown>> = {
    http_request: () => ({
      url: 'https://crm.example.com/api/customers',
      method: 'GET',
      headers: [{ name: 'Authorization', value: 'Bearer {{API_KEY}}' }],
      query_params: [{ name: 'phone', value: '{{caller_phone}}' }],
      timeout: '5000',
      speak_during_execution: true,
      speak_after_execution: true,
    }),
    transfer_call: () => ({ phone_number: '+4930999888', transfer_mode: 'cold', play_hold_music: false }),
    monitored_transfer: () => ({ phone_number: '+4930999888', timeout_seconds: 20 }),
    end_call: () => ({ goodbye_message: 'Vielen Dank fuer Ihren Anruf. Auf Wiederhoeren!' }),
    extract_variable: () => ({
      variable_name: 'email',
      variable_type: 'email',
      prompt_text: 'Bitte nennen Sie mir Ihre E-Mail-Adresse.',
      example_format: 'name@example.com',
      confirmation_enabled: true,
    }),
    play_tone: () => ({ tone_type: 'dtmf', dtmf_digit: '1', duration: 500, volume: 0.8 }),
    knowledge_base: () => ({
      top_k: 5,
      similarity_threshold: 0.7,
      bridging_sentence: 'Einen Moment, ich schaue kurz nach...',
    }),
    set_call_result: () => ({}),
    identify_caller: () => ({
      lookup_url: 'https://crm.example.com/lookup',
      fetch_case_url: 'https://crm.example.com/case',
      verify_plz_url: 'https://crm.example.com/plz',
    }),
    switch_agent: () => ({ target_agent_id: target.id, ring_count: 2, intro_instructions: 'Kurz vorstellen.' }),
    verify_value: () => ({
      value: { name: 'plz', type: 'digits' },
      rules: [{ match: 'in', values: ['50667', '50668'], outcome: 'inside' }],
      default_outcome: 'outside',
      unresolved_outcome: 'unclear',
      outcomes: {
        inside: { say: 'Wir sind für Sie zuständig.' },
        outside: { say: 'Dafür sind wir leider nicht zuständig.' },
        unclear: { say: 'Ich habe die Postleitzahl nicht verstanden.' },
      },
    }),
    list_available_slots: () => ({
      business_hours: {
        mon: [
          ['08:00', '12:00'],
          ['13:00', '17:00'],
        ],
        fri: [['08:00', '14:00']],
      },
      duration_minutes: 30,
      lead_time_hours: 4,
      search_window_days: 7,
      contact_mode: 'phone',
    }),
    book_appointment: () => ({
      business_hours: { tue: [['09:00', '18:00']] },
      duration_minutes: 60,
      contact_mode: 'email',
      email_variable: 'email',
    }),
    resolve_contact: () => ({
      employee_name: 'Frau Weber',
      confirm_calling_number: 'Darf {mitarbeiter} Sie unter dieser Nummer zurückrufen?',
      ask_mobile: 'Unter welcher Mobilnummer erreichen wir Sie?',
      ask_mobile_anonymous: 'Ihre Nummer ist unterdrückt. Wie lautet Ihre Mobilnummer?',
      ask_other_number: 'Unter welcher Nummer erreichen wir Sie am besten?',
      ask_email: 'Wie lautet Ihre E-Mail-Adresse?',
      no_contact: 'Dann notiere ich Ihr Anliegen ohne Rückrufnummer.',
    }),
  };

  it.each(Object.keys(documented))('accepts the documented %s config and returns it', async (toolType) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await post(agentId, {
      name: `tp_${toolType}`,
      display_name: 'Werkzeug',
      description: 'Documented example',
      tool_type: toolType,
      config: documented[toolType]!(),
      priority: 1,
      is_enabled: true,
    }).expect(201);
    expectSchema(res, ToolSchema);
    expect(res.body.config).toMatchObject(documented[toolType]!());
  });

  it('fills the documented defaults of the calendar, switch_agent and resolve_contact types', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const slots = await post(agentId, {
      name: 'slots',
      description: 'd',
      tool_type: 'list_available_slots',
      config: { business_hours: { mon: [['08:00', '12:00']] } },
    }).expect(201);
    expect(slots.body.config).toEqual({
      business_hours: { mon: [['08:00', '12:00']] },
      duration_minutes: 60,
      lead_time_hours: 24,
      search_window_days: 14,
      contact_mode: 'email',
      email_variable: 'email',
    });
    const sw = await post(agentId, {
      name: 'switch',
      description: 'd',
      tool_type: 'switch_agent',
      config: { target_agent_id: target.id },
    }).expect(201);
    expect(sw.body.config).toEqual({ target_agent_id: target.id, ring_count: 1 });
    const rc = await post(agentId, {
      name: 'resolve',
      description: 'd',
      tool_type: 'resolve_contact',
      config: documented.resolve_contact!(),
    }).expect(201);
    expect(rc.body.config).toMatchObject({ phone_variable: 'caller_phone', email_variable: 'email' });
  });

  it.each([
    ['timeout as a number of seconds', { url: 'https://x.example', timeout: 30 }, 'config.timeout'],
    [
      'headers as key/value pairs',
      { url: 'https://x.example', headers: [{ key: 'Authorization', value: 'x' }] },
      'config.headers[0]',
    ],
  ])('refuses the older http_request form: %s', async (_name, config, field) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const res = await post(agentId, { name: 'old', description: 'd', tool_type: 'http_request', config }).expect(400);
    const fields: string[] = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields.length).toBeGreaterThan(0);
    expect(fields.every((f) => f.startsWith(field))).toBe(true);
  });

  it.each([
    ['switch_agent ring_count above 3', 'switch_agent', { ring_count: 4 }, 'config.ring_count'],
    ['a calendar duration under 15 minutes', 'book_appointment', { duration_minutes: 10 }, 'config.duration_minutes'],
    ['a lead time over 168 hours', 'book_appointment', { lead_time_hours: 169 }, 'config.lead_time_hours'],
    ['a search window over 60 days', 'list_available_slots', { search_window_days: 61 }, 'config.search_window_days'],
    ['a resolve_contact sentence under 5 characters', 'resolve_contact', { ask_email: 'Mail' }, 'config.ask_email'],
  ])('refuses %s', async (_name, toolType, change, field) => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const config = { ...documented[toolType]!(), ...change };
    const res = await post(agentId, { name: 'bad', description: 'd', tool_type: toolType, config }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  it('refuses a tool without description with 400', async () => {
    const res = await post(await ctx.build.freshAgent(w.orgId), {
      name: 'x',
      tool_type: 'end_call',
      config: {},
    }).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'description' })]);
  });
});

describe('TalkPilot tool PATCH', () => {
  async function httpTool(agentId: string) {
    const res = await post(agentId, {
      name: 'lookup_customer',
      description: 'Looks up customer info by phone number',
      tool_type: 'http_request',
      config: {
        url: 'https://crm.example.com/api/customers',
        method: 'POST',
        headers: [{ name: 'Authorization', value: 'Bearer secret' }],
        query_params: [{ name: 'phone', value: '{{caller_phone}}' }],
        timeout: '8000',
        speak_during_execution: true,
      },
    }).expect(201);
    expectSchema(res, ToolSchema);
    return res.body;
  }

  it('merges config into the stored one: headers, query parameters and speak flags survive', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await httpTool(agentId);
    const res = await patch(agentId, tool.id, {
      is_enabled: false,
      config: { url: 'https://crm.example.com/api/v2/customers', method: 'GET' },
    }).expect(200);
    expectSchema(res, ToolSchema);
    expect(res.body.is_enabled).toBe(false);
    expect(res.body.config).toEqual({
      ...tool.config,
      url: 'https://crm.example.com/api/v2/customers',
      method: 'GET',
    });
    const [row] = await ctx.db('tools').where({ id: tool.id });
    expect(row.config.headers).toEqual([{ name: 'Authorization', value: 'Bearer secret' }]);
  });

  it('removes a config field sent as null (its default applies again)', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await httpTool(agentId);
    const res = await patch(agentId, tool.id, { config: { query_params: null, timeout: null } }).expect(200);
    expect(res.body.config).toMatchObject({ query_params: [], timeout: '5000', speak_during_execution: true });
    expect(res.body.config.headers).toEqual(tool.config.headers);
  });

  it('accepts tool_type sent back unchanged and refuses another one, writing nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await httpTool(agentId);
    await patch(agentId, tool.id, { tool_type: 'http_request', display_name: 'CRM' }).expect(200);
    const res = await patch(agentId, tool.id, { tool_type: 'end_call', display_name: 'Nope' }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'tool_type', message: 'The tool type cannot be changed' }]);
    const [row] = await ctx.db('tools').where({ id: tool.id });
    expect(row).toMatchObject({ tool_type: 'http_request', display_name: 'CRM' });
  });

  it('validates the merged config and keeps the stored one on failure', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await httpTool(agentId);
    const res = await patch(agentId, tool.id, { config: { timeout: 30 } }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['config.timeout']);
    const [row] = await ctx.db('tools').where({ id: tool.id });
    expect(row.config).toEqual(tool.config);
  });

  it('refuses an empty description', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await httpTool(agentId);
    await patch(agentId, tool.id, { description: '' }).expect(400);
    await patch(agentId, tool.id, { description: null }).expect(400);
  });

  it('answers 409 for a different phone_number on an employee-linked transfer tool', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employee = await ctx.http
      .post(`/v1/agents/${agentId}/employees`)
      .set('X-API-Key', w.key)
      .send({ name: 'Max Mustermann', phone_number: '+491701234567' })
      .expect(201);
    const tool = await post(agentId, {
      name: 'to_max',
      description: 'Transfers to Max',
      tool_type: 'monitored_transfer',
      employee_id: employee.body.id,
      config: { timeout_seconds: 20 },
    }).expect(201);
    expect(tool.body.config.phone_number).toBe('+491701234567');
    const res = await patch(agentId, tool.body.id, { config: { phone_number: '+4930999888' } }).expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    await patch(agentId, tool.body.id, { employee_id: null, config: { phone_number: '+4930999888' } }).expect(200);
  });
});
