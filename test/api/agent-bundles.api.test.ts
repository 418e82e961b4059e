import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { AgentBundleSchema, BundleChangesSchema } from '../../src/modules/agent-bundles/bundle.schemas.js';
import { AgentSchema } from '../../src/modules/agents/agent.schemas.js';

let ctx: TestContext;
let a: World;
let b: World;
beforeAll(async () => {
  ctx = await createTestContext();
  a = await ctx.build.world();
  b = await ctx.build.world();
});
afterAll(() => ctx.close());

const auth = (w: World) => ({ 'X-API-Key': w.key });
const bearer = (w: World) => ({ Authorization: `Bearer ${w.token}` });

/** An agent with one item of every kind the bundle holds, built through the API. */
async function richAgent(w: World, name = `Sanitär ${ctx.build.phone().slice(-4)}`) {
  const partner = await ctx.build.freshAgent(w.orgId, `${name} Partner`);
  const id = await ctx.build.freshAgent(w.orgId, name);
  const post = async (path: string, body: object, headers: Record<string, string> = auth(w)) =>
    (await ctx.http.post(path).set(headers).send(body).expect(201)).body as { id: string };
  await ctx.http
    .patch(`/v1/agents/${id}`)
    .set(auth(w))
    .send({
      prompt: 'Du bist die Telefonassistenz der Firma {{firma}}.',
      greeting: 'Guten Tag',
      backup_agent_id: partner,
      post_call_webhook_url: 'https://hooks.example.com/calls?token=abc123',
      schedule: {
        timezone: 'Europe/Berlin',
        rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
        exceptions: [{ date: '2026-12-24', closed: true, note: 'Heiligabend' }],
      },
      analysis_fields: [{ name: 'urgency', type: 'enum', values: ['low', 'high'], required: true }],
    })
    .expect(200);
  const employee = await post(`/v1/agents/${id}/employees`, { name: 'Max Meister', phone_number: '+4930123456' });
  await post(`/v1/agents/${id}/tools`, {
    name: 'transfer_max',
    tool_type: 'transfer_call',
    description: 'Zu Max',
    employee_id: employee.id,
  });
  await post(`/v1/agents/${id}/tools`, {
    name: 'lookup',
    tool_type: 'http_request',
    description: 'Kunden suchen',
    config: { url: 'https://crm.example.com/lookup', headers: [{ name: 'Authorization', value: 'Bearer s3cr3t' }] },
  });
  await post(`/v1/agents/${id}/tools`, {
    name: 'to_partner',
    tool_type: 'switch_agent',
    description: 'Zum Partner',
    config: { target_agent_id: partner },
  });
  await ctx.http
    .put(`/v1/agents/${id}/workflow`)
    .set(auth(w))
    .send({
      name: 'Aufnahme',
      steps: [{ id: 'start', name: 'Start', description: 'Begrüßen', completion: 'fertig', tools: ['lookup'] }],
    })
    .expect(200);
  await post(`/v1/agents/${id}/forwarding-slots`, {
    slotnummer: '01',
    cases: 'Rohrbruch',
    prioritaet_1: 'Max Meister',
  });
  await post(`/v1/agents/${id}/test-cases`, {
    name: 'Heiligabend',
    input: { at: '2026-12-24T10:00:00+01:00' },
    expect: { accepting_calls: false, answered_by_agent_id: partner },
  });
  await post(`/v1/agents/${id}/knowledge-base`, { title: 'Preise', content: 'Anfahrt 49 Euro' });
  const doc = await post(`/v1/agents/${id}/knowledge-base`, { title: 'FAQ', content: '' });
  await post(`/v1/agents/${id}/knowledge-base/${doc.id}/chunks`, {
    chunks: [{ chunk_index: 0, content: 'Wir reparieren Heizungen.', metadata: { source: 'faq' } }],
  });
  const orgDoc = await post(
    `/v1/organization/${w.orgId}/knowledge-base`,
    { title: `Leitfaden ${name}`, content: 'Immer freundlich' },
    bearer(w),
  );
  await ctx.http
    .put(`/v1/organization/${w.orgId}/knowledge-base/${orgDoc.id}/grants`)
    .set(bearer(w))
    .send({ agent_ids: [id] })
    .expect((res) => expect(res.status).toBeLessThan(300));
  return id;
}

const getBundle = (id: string, w = a) => ctx.http.get(`/v1/agents/${id}/bundle`).set(auth(w));

describe('GET /v1/agents/{agentId}/bundle', () => {
  it('holds every resource by name, without ids, with secrets as placeholders; YAML on request', async () => {
    const id = await richAgent(a);
    const res = await getBundle(id).expect(200);
    const bundle = expectSchema(res, AgentBundleSchema);
    expect(bundle.api_version).toBe('voice-agent/v1');
    expect(bundle.kind).toBe('Agent');
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(text).not.toContain('s3cr3t');
    expect(text).not.toContain('abc123');
    const { spec } = bundle;
    expect(spec.configuration.backup_agent).toBe(`${bundle.name} Partner`);
    expect(spec.configuration.post_call_webhook_url).toEqual({ $secret: 'post_call_webhook_url' });
    expect((spec.configuration as Record<string, { exceptions?: unknown }>).schedule?.exceptions).toEqual([
      { date: '2026-12-24', closed: true, note: 'Heiligabend' },
    ]);
    expect((spec.configuration as Record<string, unknown>).analysis_fields).toHaveLength(1);
    expect(spec.tools.find((t) => t.name === 'transfer_max')?.employee).toBe('Max Meister');
    expect(spec.tools.find((t) => t.name === 'to_partner')?.config.target_agent).toBe(`${bundle.name} Partner`);
    expect(spec.tools.find((t) => t.name === 'lookup')?.config.headers).toEqual([
      { name: 'Authorization', value: { $secret: 'tools.lookup.headers.Authorization' } },
    ]);
    expect(spec.test_cases[0]!.expect.answered_by_agent).toBe(`${bundle.name} Partner`);
    expect(spec.knowledge_base.documents.map((d) => d.title)).toEqual(['FAQ', 'Preise']);
    expect(spec.knowledge_base.documents[0]!.chunks).toEqual([
      { chunk_index: 0, content: 'Wir reparieren Heizungen.', metadata: { source: 'faq' } },
    ]);
    expect(spec.knowledge_base.organization_documents).toEqual([`Leitfaden ${bundle.name}`]);
    expect(res.get('ETag')).toBeTruthy();
    await getBundle(id).set('If-None-Match', res.get('ETag')!).expect(304);

    const yaml = await getBundle(id).set('Accept', 'application/yaml').expect(200);
    expect(yaml.get('Content-Type')).toMatch(/application\/yaml/);
    expect(parseYaml(yaml.text)).toEqual(res.body);
    expect(yaml.get('ETag')).toBe(res.get('ETag'));
  });

  it('needs every read it includes', async () => {
    const key = await ctx.build.apiKey(a.orgId, a.userId, { permissions: ['agents:read', 'tools:read'] });
    const res = await ctx.http.get(`/v1/agents/${a.agentId}/bundle`).set('X-API-Key', key.key).expect(403);
    expect(res.body.error.message).toContain('employees:read');
  });
});

describe('import and apply', () => {
  it('imports into another organization losslessly; applying to the source changes nothing', async () => {
    const id = await richAgent(a, 'Heizung Nord');
    const bundle = (await getBundle(id).expect(200)).body;
    // The names it references exist in B too.
    await ctx.build.freshAgent(b.orgId, 'Heizung Nord Partner');
    await ctx.http
      .post(`/v1/organization/${b.orgId}/knowledge-base`)
      .set(bearer(b))
      .send({ title: 'Leitfaden Heizung Nord', content: 'x' })
      .expect(201);
    const secrets = {
      post_call_webhook_url: 'https://hooks.example.com/calls?token=abc123',
      'tools.lookup.headers.Authorization': 'Bearer s3cr3t',
    };
    const created = await ctx.http
      .post('/v1/agents/import')
      .set(auth(b))
      .send({ ...bundle, secrets, phone_number: ctx.build.phone() })
      .expect(201);
    const agent = expectSchema(created, AgentSchema);
    expect(agent.organization_id).toBe(b.orgId);
    const again = (await getBundle(agent.id, b).expect(200)).body;
    expect(again).toEqual(bundle);

    const etag = (await getBundle(id).expect(200)).get('ETag')!;
    const versions = await ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }).first();
    const applied = await ctx.http
      .put(`/v1/agents/${id}/bundle`)
      .set(auth(a))
      .set('If-Match', etag)
      .send(bundle)
      .expect(200);
    expectSchema(applied, BundleChangesSchema);
    expect(applied.body).toEqual({ changes: [] });
    expect(await ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }).first()).toEqual(versions);
  });

  it('applies changes in one version and one audit entry, answering them', async () => {
    const id = await richAgent(a, 'Elektro Süd');
    const bundle = (await getBundle(id).expect(200)).body;
    bundle.spec.configuration.greeting = 'Moin';
    bundle.spec.employees.unshift({ ...bundle.spec.employees[0], name: 'Erika', phone_number: '+4930999999' });
    bundle.spec.tools = bundle.spec.tools.filter((t: { name: string }) => t.name !== 'to_partner');
    bundle.spec.knowledge_base.documents[1].content = 'Anfahrt 59 Euro';
    const before = await ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }).first();
    const audits = await ctx.db('audit_log').count({ n: '*' }).first();
    const res = await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).send(bundle).expect(200);
    const paths = res.body.changes.map((c: { path: string; op: string }) => `${c.op} ${c.path}`);
    expect(paths).toEqual([
      'change spec.configuration.greeting',
      'add spec.employees.Erika',
      'change spec.knowledge_base.documents.Preise.content',
      'remove spec.tools.to_partner',
    ]);
    const after = await ctx.db('agent_versions').where({ agent_id: id }).count({ n: '*' }).first();
    expect(Number(after!.n)).toBe(Number(before!.n) + 1);
    expect(Number((await ctx.db('audit_log').count({ n: '*' }).first())!.n)).toBe(Number(audits!.n) + 1);
    expect((await getBundle(id).expect(200)).body).toEqual(bundle);
  });

  it('refuses a field it cannot store, naming it, and changes nothing', async () => {
    const id = await richAgent(a, 'Dach West');
    const bundle = (await getBundle(id).expect(200)).body;
    bundle.spec.tools[0].colour = 'red';
    bundle.spec.configuration.greeting = 'Anders';
    const res = await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).send(bundle).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'spec.tools[0].colour' })]);
    delete bundle.spec.tools[0].colour;
    bundle.spec.employees[0].phone_number = 'nope';
    const bad = await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).send(bundle).expect(400);
    expect(bad.body.error.details[0].field).toBe('spec.employees[0].phone_number');
    expect((await ctx.db('agents').where({ id }).first('greeting')).greeting).toBe('Guten Tag');
  });

  it('dry run answers the changes and stores nothing; If-Match guards', async () => {
    const id = await richAgent(a, 'Maler Ost');
    const bundle = (await getBundle(id).expect(200)).body;
    bundle.name = 'Maler Ost GmbH';
    const res = await ctx.http.put(`/v1/agents/${id}/bundle?dry_run=true`).set(auth(a)).send(bundle).expect(200);
    expect(res.get('Dry-Run')).toBe('true');
    expect(res.body.changes).toEqual([{ path: 'name', op: 'change', from: 'Maler Ost', to: 'Maler Ost GmbH' }]);
    expect((await ctx.db('agents').where({ id }).first('name')).name).toBe('Maler Ost');
    await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).set('If-Match', '"stale"').send(bundle).expect(412);
  });

  it('needs If-Match where the organization requires it (428), as a PATCH does', async () => {
    const c = await ctx.build.world();
    await ctx.http.patch(`/v1/organization/${c.orgId}`).set(bearer(c)).send({ require_if_match: true }).expect(200);
    const res = await getBundle(c.agentId, c).expect(200);
    const bundle = { ...res.body, name: 'Umbenannt' };
    await ctx.http.put(`/v1/agents/${c.agentId}/bundle`).set(auth(c)).send(bundle).expect(428);
    expect((await ctx.db('agents').where({ id: c.agentId }).first('name')).name).toBe('Main Agent');
    await ctx.http
      .put(`/v1/agents/${c.agentId}/bundle`)
      .set(auth(c))
      .set('If-Match', res.get('ETag')!)
      .send(bundle)
      .expect(200);
  });

  it('a missing secret is a 400 naming the field', async () => {
    const id = await richAgent(a, 'Fliesen');
    const bundle = (await getBundle(id).expect(200)).body;
    const res = await ctx.http
      .post('/v1/agents/import')
      .set(auth(a))
      .send({ ...bundle, name: 'Fliesen 2', phone_number: ctx.build.phone() })
      .expect(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain('spec.configuration.post_call_webhook_url');
    expect(fields).toContain('spec.tools[0].config.headers[0].value');
  });
});

describe('the test-case guard', () => {
  /** An agent open on weekdays whose one saved case expects it open on a Monday at 10, and that requires it to pass. */
  async function guardedAgent(name: string) {
    const created = await ctx.http
      .post('/v1/agents/import')
      .set(auth(a))
      .send({
        api_version: 'voice-agent/v1',
        kind: 'Agent',
        name,
        phone_number: ctx.build.phone(),
        spec: {
          configuration: {
            schedule: {
              timezone: 'Europe/Berlin',
              rules: [{ days: [1, 2, 3, 4, 5], start_time: '08:00', end_time: '17:00' }],
            },
            require_passing_test_cases: true,
          },
          test_cases: [
            { name: 'Montag offen', input: { at: '2026-11-23T10:00:00+01:00' }, expect: { accepting_calls: true } },
          ],
        },
      })
      .expect(201);
    const id = created.body.id as string;
    const caseId = (await ctx.db('agent_test_cases').where({ agent_id: id }).first('id')).id as string;
    return { id, caseId };
  }

  /** Everything a bundle write could leave behind. */
  const stored = async (id: string) => ({
    agent: await ctx.db('agents').where({ id }).first(),
    versions: await ctx.db('agent_versions').where({ agent_id: id }).orderBy('version').select('version'),
    audit: await ctx.db('audit_log').where({ agent_id: id }).orderBy('created_at').select('id'),
    bundle: (await getBundle(id).expect(200)).body,
  });

  it('refuses a PUT .../bundle that breaks a required case with 409 TEST_CASES_FAILED, as a PATCH; nothing is written', async () => {
    const { id, caseId } = await guardedAgent('Praxis Wächter');
    const bundle = (await getBundle(id).expect(200)).body;
    bundle.spec.configuration.vacation_mode = true;
    bundle.spec.configuration.greeting = 'Wir sind im Urlaub';
    const before = await stored(id);

    const res = await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).send(bundle);
    expect([res.status, res.body.error?.code]).toEqual([409, 'TEST_CASES_FAILED']);
    expect(res.body.error.details).toContainEqual(
      expect.objectContaining({ field: `test_cases.${caseId}.expect.accepting_calls`, expected: true, actual: false }),
    );
    const patch = await ctx.http.patch(`/v1/agents/${id}`).set(auth(a)).send({ vacation_mode: true });
    expect(patch.status).toBe(409);
    expect(res.body.error.details).toEqual(patch.body.error.details);
    expect(await stored(id)).toEqual(before);

    // A dry run answers the changes and names the case it would break, as a PATCH's dry run does.
    const dry = await ctx.http.put(`/v1/agents/${id}/bundle?dry_run=true`).set(auth(a)).send(bundle).expect(200);
    expect(dry.get('Test-Cases-Failed')).toBe(caseId);
    expect(dry.body.changes.map((c: { path: string }) => c.path)).toEqual([
      'spec.configuration.greeting',
      'spec.configuration.vacation_mode',
    ]);
    expect(await stored(id)).toEqual(before);

    // Switching the guard off in the same bundle goes through (the flag is read after the write).
    bundle.spec.configuration.require_passing_test_cases = false;
    await ctx.http.put(`/v1/agents/${id}/bundle`).set(auth(a)).send(bundle).expect(200);
    const after = await stored(id);
    expect(after.versions).toHaveLength(before.versions.length + 1);
    expect(after.audit).toHaveLength(before.audit.length + 1);
  });
});

describe('clone', () => {
  it('copies the agent with its credentials, in its organization or another', async () => {
    const id = await richAgent(a, 'Schreiner');
    const res = await ctx.http
      .post(`/v1/agents/${id}/clone`)
      .set(auth(a))
      .send({ name: 'Schreiner Zwei', phone_number: ctx.build.phone() })
      .expect(201);
    const copy = expectSchema(res, AgentSchema);
    const original = (await getBundle(id).expect(200)).body;
    const cloned = (await getBundle(copy.id).expect(200)).body;
    expect(cloned).toEqual({ ...original, name: 'Schreiner Zwei' });
    const stored = await ctx.db('tools').where({ agent_id: copy.id, name: 'lookup' }).first('config');
    expect(stored.config.headers[0].value).toBe('Bearer s3cr3t');

    // Another organization: the names it references must exist there.
    const refused = await ctx.http
      .post(`/v1/agents/${id}/clone`)
      .set(bearer(a))
      .send({ name: 'X', phone_number: ctx.build.phone(), organization_id: b.orgId })
      .expect(404);
    expect(refused.body.error.code).toBe('NOT_FOUND');
  });
});

describe('clone into another organization', () => {
  /** A user who writes in A and has `roleInB` in B: a token reaching both. */
  async function memberOfBoth(roleInB: 'admin' | 'member') {
    const user = await ctx.build.user(a.orgId, 'developer_admin');
    await ctx.build.member(user.id, b.orgId, roleInB);
    return { Authorization: `Bearer ${ctx.build.token(user.id)}` };
  }

  /** The source's references (its partner agent, its organization document) by the same names in B. */
  async function namesInB(name: string) {
    await ctx.build.freshAgent(b.orgId, `${name} Partner`);
    await ctx.http
      .post(`/v1/organization/${b.orgId}/knowledge-base`)
      .set(bearer(b))
      .send({ title: `Leitfaden ${name}`, content: 'Immer freundlich' })
      .expect(201);
  }

  const agentsOfB = async () => (await ctx.db('agents').where({ organization_id: b.orgId }).orderBy('id')).length;

  it('copies the agent there, credentials included, for a caller with agents:write in the target', async () => {
    const id = await richAgent(a, 'Klempner Nord');
    await namesInB('Klempner Nord');
    const res = await ctx.http
      .post(`/v1/agents/${id}/clone`)
      .set(await memberOfBoth('admin'))
      .send({ name: 'Klempner Nord B', phone_number: ctx.build.phone(), organization_id: b.orgId })
      .expect(201);
    const copy = expectSchema(res, AgentSchema);
    expect(copy.organization_id).toBe(b.orgId);
    const original = (await getBundle(id).expect(200)).body;
    expect((await getBundle(copy.id, b).expect(200)).body).toEqual({ ...original, name: 'Klempner Nord B' });
    const tool = await ctx.db('tools').where({ agent_id: copy.id, name: 'lookup' }).first('config', 'organization_id');
    expect(tool).toMatchObject({ organization_id: b.orgId, config: { headers: [{ value: 'Bearer s3cr3t' }] } });
    const partner = await ctx.db('agents').where({ organization_id: b.orgId, name: 'Klempner Nord Partner' }).first();
    expect((await ctx.db('agents').where({ id: copy.id }).first()).backup_agent_id).toBe(partner.id);
  });

  it('is refused with 403 naming agents:write where the caller only reads, and creates nothing there', async () => {
    const id = await richAgent(a, 'Klempner Süd');
    await namesInB('Klempner Süd');
    const before = await agentsOfB();
    const res = await ctx.http
      .post(`/v1/agents/${id}/clone`)
      .set(await memberOfBoth('member'))
      .send({ name: 'Klempner Süd B', phone_number: ctx.build.phone(), organization_id: b.orgId })
      .expect(403);
    expect(res.body.error.message).toContain('agents:write');
    expect(await agentsOfB()).toBe(before);
  });
});

describe('agent templates', () => {
  const template = {
    name: 'Handwerksbetrieb',
    variables: [{ name: 'firma' }, { name: 'gewerk', default: 'Sanitär' }],
    bundle: {
      api_version: 'voice-agent/v1',
      kind: 'Agent',
      name: '{{firma}}',
      spec: {
        configuration: { prompt: 'Du bist die Telefonassistenz von {{firma}} ({{gewerk}}).' },
        employees: [{ name: 'Meister', phone_number: '+4930123456' }],
        tools: [{ name: 'zum_meister', tool_type: 'transfer_call', description: 'Zum Meister', employee: 'Meister' }],
      },
    },
  };

  it('saves, lists, creates agents from, and deletes a template', async () => {
    const created = await ctx.http.post('/v1/agent-templates').set(auth(a)).send(template).expect(201);
    const list = await ctx.http.get('/v1/agent-templates').set(auth(a)).expect(200);
    expect(list.body.data.map((t: { id: string }) => t.id)).toContain(created.body.id);

    const missing = await ctx.http
      .post('/v1/agents')
      .set(auth(a))
      .send({ template_id: created.body.id, variables: {}, phone_number: ctx.build.phone() })
      .expect(400);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'variables.firma' })]);

    const agent = await ctx.http
      .post('/v1/agents')
      .set(auth(a))
      .send({ template_id: created.body.id, variables: { firma: 'Müller GmbH' }, phone_number: ctx.build.phone() })
      .expect(201);
    expectSchema(agent, AgentSchema);
    expect(agent.body.name).toBe('Müller GmbH');
    expect(agent.body.prompt).toBe('Du bist die Telefonassistenz von Müller GmbH (Sanitär).');
    const bundle = (await getBundle(agent.body.id).expect(200)).body;
    expect(bundle.spec.tools[0].employee).toBe('Meister');

    await ctx.http.delete(`/v1/agent-templates/${created.body.id}`).set(auth(a)).expect(204);
    await ctx.http.delete(`/v1/agent-templates/${created.body.id}`).set(auth(a)).expect(404);
  });

  it('refuses a placeholder that is not a declared variable, naming where it is', async () => {
    const res = await ctx.http
      .post('/v1/agent-templates')
      .set(auth(a))
      .send({ ...template, name: 'Falsch', variables: [{ name: 'firma' }] })
      .expect(400);
    expect(res.body.error.details).toEqual([
      expect.objectContaining({
        field: 'bundle.spec.configuration.prompt',
        message: '{{gewerk}} is not a declared variable',
      }),
    ]);
  });
});
