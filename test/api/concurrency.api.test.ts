import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Response } from 'supertest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

function call(method: Method, path: string, headers: Record<string, string> = {}, body?: object) {
  const request = ctx.http[method](path).set('X-API-Key', w.key);
  for (const [name, value] of Object.entries(headers)) request.set(name, value);
  return body === undefined ? request : request.send(body);
}

function workflow(name: string) {
  return {
    name,
    steps: [{ id: 'start', name: 'Start', description: 'Greets', completion: 'Done', tools: [], next: [] }],
  };
}

const STRONG_TAG = /^"[A-Za-z0-9_-]+"$/;

/** Rows that a write leaves behind besides the resource: versions, audit entries, events. */
async function traces(agentId: string | null = null) {
  const count = async (table: string, where: Record<string, unknown>) =>
    Number((await ctx.db(table).where(where).count<{ count: number }[]>('* as count'))[0]!.count);
  return {
    versions: agentId ? await count('agent_versions', { agent_id: agentId }) : 0,
    audit: await count('audit_log', { organization_id: w.orgId }),
    events: await count('events', { organization_id: w.orgId }),
  };
}

function tagOf(res: Response): string {
  const tag = res.headers.etag as string | undefined;
  expect(tag).toMatch(STRONG_TAG);
  return tag!;
}

/**
 * The common contract of one conditional resource: GET has a strong ETag, If-None-Match gives 304,
 * a write answers the tag the next GET shows, a stale If-Match is 412 with nothing written, `*` and
 * lists match.
 */
async function expectConditionalResource(options: {
  path: string;
  agentId: string | null;
  method: 'patch' | 'put';
  body: () => object;
}) {
  const { path, method, agentId } = options;
  const first = await call('get', path).expect(200);
  const tag = tagOf(first);

  const notModified = await call('get', path, { 'If-None-Match': tag }).expect(304);
  expect(notModified.text ?? '').toBe('');
  await call('get', path, { 'If-None-Match': `W/${tag}, "other"` }).expect(304);
  await call('get', path, { 'If-None-Match': '"other"' }).expect(200);

  const written = await call(method, path, { 'If-Match': tag }, options.body()).expect(200);
  const newTag = tagOf(written);
  expect(newTag).not.toBe(tag);
  const next = await call('get', path).expect(200);
  expect(tagOf(next)).toBe(newTag);
  // PUT of the slots adds replaced_count to the list a GET shows.
  const { replaced_count: _count, ...shown } = written.body as Record<string, unknown>;
  expect(next.body).toEqual(shown);

  const before = await traces(agentId);
  const stale = await call(method, path, { 'If-Match': tag }, options.body()).expect(412);
  expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
  expect(stale.body.error.message).toContain(newTag);
  expect(await traces(agentId)).toEqual(before);
  expect(tagOf(await call('get', path).expect(200))).toBe(newTag);

  const listed = await call(method, path, { 'If-Match': `"nope", ${newTag}` }, options.body()).expect(200);
  await call(method, path, { 'If-Match': '*' }, options.body()).expect(200);
  await call(method, path, { 'If-Match': `W/${tagOf(listed)}` }, options.body()).expect(412);
}

describe('agents', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412 and writes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    let n = 0;
    await expectConditionalResource({
      path: `/v1/agents/${agentId}`,
      agentId,
      method: 'patch',
      body: () => ({ name: `Agent ${++n}` }),
    });
  });

  it('a cached agent is sent as the same bytes and tag; a change announced by SQL changes both', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const first = await call('get', `/v1/agents/${agentId}`).expect(200);
    const second = await call('get', `/v1/agents/${agentId}`).expect(200);
    expect(second.text).toBe(first.text);
    expect(tagOf(second)).toBe(tagOf(first));
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(second.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    // HEAD: the same headers, no body.
    const head = await ctx.http.head(`/v1/agents/${agentId}`).set('X-API-Key', w.key).expect(200);
    expect(tagOf(head)).toBe(tagOf(first));
    expect(head.headers['content-length']).toBe(second.headers['content-length']);
    expect(head.text).toBeUndefined();
    await call('get', `/v1/agents/${agentId}`, { 'If-None-Match': tagOf(first) }).expect(304);
    // Not through the API: the row's trigger announces it, and the next GET must not send the old
    // representation kept for the cached row.
    await ctx.db('agents').where({ id: agentId }).update({ name: 'Renamed by SQL' });
    await ctx.syncCaches();
    const third = await call('get', `/v1/agents/${agentId}`).expect(200);
    expect(third.body.name).toBe('Renamed by SQL');
    expect(tagOf(third)).not.toBe(tagOf(first));
    await call('get', `/v1/agents/${agentId}`, { 'If-None-Match': tagOf(first) }).expect(200);
  });

  it('of 20 concurrent PATCHes with the same ETag exactly one succeeds', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tag = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('patch', `/v1/agents/${agentId}`, { 'If-Match': tag }, { name: `Racer ${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
    const winner = answers.find((a) => a.status === 200)!;
    const stored = await ctx.db('agents').where({ id: agentId }).first('name');
    expect(stored.name).toBe(winner.body.name);
    expect(await ctx.db('agent_versions').where({ agent_id: agentId, change: 'agent.updated' }).count()).toEqual([
      { count: 1 },
    ]);
  });

  it('a version restore changes the ETag', async () => {
    const created = await call('post', '/v1/agents', {}, { name: 'First', phone_number: ctx.build.phone() }).expect(
      201,
    );
    const agentId = created.body.id as string;
    await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Second' }).expect(200);
    const tag = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
    const versions = await call('get', `/v1/agents/${agentId}/versions`).expect(200);
    const oldest = Math.min(...versions.body.data.map((v: { version: number }) => v.version));
    await call('post', `/v1/agents/${agentId}/versions/${oldest}/restore`).expect(201);
    const after = await call('get', `/v1/agents/${agentId}`).expect(200);
    expect(tagOf(after)).not.toBe(tag);
    await call('patch', `/v1/agents/${agentId}`, { 'If-Match': tag }, { name: 'Third' }).expect(412);
  });

  it('DELETE with a stale If-Match is 412 and keeps the agent; with the current one it deletes', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tag = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
    await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Changed' }).expect(200);
    await call('delete', `/v1/agents/${agentId}`, { 'If-Match': tag }).expect(412);
    expect(await ctx.db('agents').where({ id: agentId }).first('id')).toBeDefined();
    const current = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
    await call('delete', `/v1/agents/${agentId}`, { 'If-Match': current }).expect(204);
  });

  it('a dry-run PATCH answers the same body, stores nothing and sends nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const before = await ctx.db('agents').where({ id: agentId }).first();
    const traced = await traces(agentId);
    ctx.clock.set('2026-11-27T08:00:00Z');
    const dry = await call('patch', `/v1/agents/${agentId}?dry_run=true`, {}, { name: 'Preview' }).expect(200);
    expect(dry.headers['dry-run']).toBe('true');
    expect(dry.headers.etag).toBeUndefined();
    expect(await ctx.db('agents').where({ id: agentId }).first()).toEqual(before);
    expect(await traces(agentId)).toEqual(traced);
    const real = await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Preview' }).expect(200);
    expect(dry.body).toEqual(real.body);
    const invalid = { name: '' };
    const dryInvalid = await call('patch', `/v1/agents/${agentId}?dry_run=true`, {}, invalid).expect(400);
    const realInvalid = await call('patch', `/v1/agents/${agentId}`, {}, invalid).expect(400);
    expect(dryInvalid.body.error.details).toEqual(realInvalid.body.error.details);
    await call('patch', `/v1/agents/${agentId}?dry_run=maybe`, {}, { name: 'x' }).expect(400);
    await call('delete', `/v1/agents/${agentId}?dry_run=true`).expect(400);
  });
});

describe('workflow', () => {
  it('GET and PUT carry the ETag; a stale If-Match is 412 and writes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    let n = 0;
    await expectConditionalResource({
      path: `/v1/agents/${agentId}/workflow`,
      agentId,
      method: 'put',
      body: () => ({ workflow: workflow(`Flow ${++n}`) }),
    });
  });
});

/** A dry run answers what the real request answers (201 becomes 200) and leaves every table as it was. */
async function expectDryRun(options: {
  method: 'post' | 'patch' | 'put';
  path: string;
  body: object;
  agentId: string;
  table: string;
  invalid: object;
  realStatus: number;
}) {
  const { method, path, body, agentId, table } = options;
  const rows = () => ctx.db(table).where({ agent_id: agentId }).orderBy('id');
  const before = await rows();
  const traced = await traces(agentId);
  const dry = await call(method, `${path}?dry_run=true`, {}, body).expect(200);
  expect(dry.headers['dry-run']).toBe('true');
  expect(await rows()).toEqual(before);
  expect(await traces(agentId)).toEqual(traced);
  const real = await call(method, path, {}, body).expect(options.realStatus);
  // A created row's id is new each time; everything else is the same answer.
  const withoutIds = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === 'id' ? undefined : v));
  expect(withoutIds(dry.body)).toEqual(withoutIds(real.body));
  if (method === 'patch') expect(dry.body).toEqual(real.body);
  const dryInvalid = await call(method, `${path}?dry_run=true`, {}, options.invalid).expect(400);
  const realInvalid = await call(method, path, {}, options.invalid).expect(400);
  expect(dryInvalid.body.error.details).toEqual(realInvalid.body.error.details);
  return real;
}

describe('tools', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412 and writes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const tool = await call(
      'post',
      `/v1/agents/${agentId}/tools`,
      {},
      { name: 'hangup', description: 'Ends', tool_type: 'end_call' },
    ).expect(201);
    expect(tagOf(tool)).toBe(tagOf(await call('get', `/v1/agents/${agentId}/tools/${tool.body.id}`).expect(200)));
    let n = 0;
    await expectConditionalResource({
      path: `/v1/agents/${agentId}/tools/${tool.body.id}`,
      agentId,
      method: 'patch',
      body: () => ({ description: `Ends the call ${++n}` }),
    });
  });

  it("changes its ETag when the linked employee's phone number changes", async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employee = await call(
      'post',
      `/v1/agents/${agentId}/employees`,
      {},
      { name: 'Erika', phone_number: '+4930777' },
    ).expect(201);
    const tool = await call(
      'post',
      `/v1/agents/${agentId}/tools`,
      {},
      {
        name: 'to_erika',
        description: 'Transfers',
        tool_type: 'transfer_call',
        employee_id: employee.body.id,
      },
    ).expect(201);
    const path = `/v1/agents/${agentId}/tools/${tool.body.id}`;
    const tag = tagOf(await call('get', path).expect(200));
    await call('patch', `/v1/agents/${agentId}/employees/${employee.body.id}`, {}, { phone_number: '+4930888' }).expect(
      200,
    );
    const after = await call('get', path).expect(200);
    expect(after.body.config.phone_number).toBe('+4930888');
    expect(tagOf(after)).not.toBe(tag);
    await call('patch', path, { 'If-Match': tag }, { description: 'Stale' }).expect(412);
    await call('delete', path, { 'If-Match': tag }).expect(412);
  });

  it('dry runs of POST and PATCH store nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await expectDryRun({
      method: 'post',
      path: `/v1/agents/${agentId}/tools`,
      body: { name: 'hangup', description: 'Ends', tool_type: 'end_call' },
      invalid: { name: 'Bad Name', tool_type: 'end_call' },
      agentId,
      table: 'tools',
      realStatus: 201,
    });
    await expectDryRun({
      method: 'patch',
      path: `/v1/agents/${agentId}/tools/${created.body.id}`,
      body: { description: 'Changed' },
      invalid: { priority: -1 },
      agentId,
      table: 'tools',
      realStatus: 200,
    });
  });
});

describe('employees', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412 and writes nothing (no event)', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const employee = await call('post', `/v1/agents/${agentId}/employees`, {}, { name: 'Max' }).expect(201);
    const path = `/v1/agents/${agentId}/employees/${employee.body.id}`;
    expect(tagOf(employee)).toBe(tagOf(await call('get', path).expect(200)));
    const statuses = ['urlaub', 'anwesend'];
    let n = 0;
    await expectConditionalResource({ path, agentId, method: 'patch', body: () => ({ status: statuses[n++ % 2] }) });
  });

  it('dry runs of POST and PATCH store nothing and send no event', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await expectDryRun({
      method: 'post',
      path: `/v1/agents/${agentId}/employees`,
      body: { name: 'Erika' },
      invalid: { name: '' },
      agentId,
      table: 'employees',
      realStatus: 201,
    });
    await expectDryRun({
      method: 'patch',
      path: `/v1/agents/${agentId}/employees/${created.body.id}`,
      body: { status: 'urlaub' },
      invalid: { status: 'asleep' },
      agentId,
      table: 'employees',
      realStatus: 200,
    });
  });
});

describe('contacts', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412 and writes nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const contact = await call('post', `/v1/agents/${agentId}/contacts`, {}, { customer_name: 'Anna' }).expect(201);
    const path = `/v1/agents/${agentId}/contacts/${contact.body.id}`;
    expect(tagOf(contact)).toBe(tagOf(await call('get', path).expect(200)));
    let n = 0;
    await expectConditionalResource({ path, agentId, method: 'patch', body: () => ({ note: `Note ${++n}` }) });
    await call('delete', path, { 'If-Match': '"stale"' }).expect(412);
    await call('delete', path, { 'If-Match': '*' }).expect(204);
  });

  it('dry runs of POST and PATCH store nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await expectDryRun({
      method: 'post',
      path: `/v1/agents/${agentId}/contacts`,
      body: { customer_name: 'Berta' },
      invalid: { email: 'not an address' },
      agentId,
      table: 'contacts',
      realStatus: 201,
    });
    await expectDryRun({
      method: 'patch',
      path: `/v1/agents/${agentId}/contacts/${created.body.id}`,
      body: { note: 'Called back' },
      invalid: { email: 'not an address' },
      agentId,
      table: 'contacts',
      realStatus: 200,
    });
  });
});

describe('forwarding slots', () => {
  it('the list has an ETag; PUT answers the ETag the next GET shows; a stale If-Match is 412', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    let n = 0;
    await expectConditionalResource({
      path: `/v1/agents/${agentId}/forwarding-slots`,
      agentId,
      method: 'put',
      body: () => ({ slots: [{ slotnummer: '01', cases: `Case ${++n}` }] }),
    });
  });

  it('a single slot has its own ETag; PATCH and DELETE check If-Match and changing it changes the list tag', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const list = `/v1/agents/${agentId}/forwarding-slots`;
    const created = await call('post', list, {}, { slotnummer: '02', cases: 'Billing' }).expect(201);
    const path = `${list}/${created.body.id}`;
    expect(tagOf(created)).toBe(tagOf(await call('get', path).expect(200)));
    const listTag = tagOf(await call('get', list).expect(200));
    let n = 0;
    await expectConditionalResource({ path, agentId, method: 'patch', body: () => ({ cases: `Billing ${++n}` }) });
    expect(tagOf(await call('get', list).expect(200))).not.toBe(listTag);
    await call('put', list, { 'If-Match': listTag }, { slots: [] }).expect(412);
    await call('delete', path, { 'If-Match': tagOf(created) }).expect(412);
    await call('delete', path, { 'If-Match': '*' }).expect(204);
  });

  it('a dry-run PUT stores nothing', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await expectDryRun({
      method: 'put',
      path: `/v1/agents/${agentId}/forwarding-slots`,
      body: { slots: [{ slotnummer: '01', cases: 'Everything' }] },
      invalid: { slots: [{ slotnummer: '1', cases: 'x' }] },
      agentId,
      table: 'forwarding_slots',
      realStatus: 200,
    });
  });
});

describe('organization', () => {
  it('GET /v1/organization/{orgId} and PATCH carry the ETag; a stale If-Match is 412', async () => {
    const flags = [true, false];
    let n = 0;
    await expectConditionalResource({
      path: `/v1/organization/${w.orgId}`,
      agentId: null,
      method: 'patch',
      body: () => ({ forward_call_email: flags[n++ % 2] }),
    });
  });

  it('require_if_match: writes without If-Match get 428, with it they pass; off again with If-Match', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const org = await call('patch', `/v1/organization/${w.orgId}`, {}, { require_if_match: true }).expect(200);
    expect(org.body.require_if_match).toBe(true);
    try {
      const refused = await call('patch', `/v1/agents/${agentId}`, {}, { name: 'No tag' }).expect(428);
      expect(refused.body.error.code).toBe('PRECONDITION_REQUIRED');
      await call('put', `/v1/agents/${agentId}/forwarding-slots`, {}, { slots: [] }).expect(428);
      await call('put', `/v1/agents/${agentId}/workflow`, {}, { workflow: null }).expect(428);
      await call('delete', `/v1/agents/${agentId}`).expect(428);
      await call('patch', `/v1/organization/${w.orgId}`, {}, { require_if_match: false }).expect(428);
      const tag = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
      await call('patch', `/v1/agents/${agentId}`, { 'If-Match': tag }, { name: 'Tagged' }).expect(200);
      // Creating needs no tag: there is nothing to match yet.
      await call('post', `/v1/agents/${agentId}/contacts`, {}, { customer_name: 'New' }).expect(201);
    } finally {
      const orgTag = tagOf(await call('get', `/v1/organization/${w.orgId}`).expect(200));
      await call('patch', `/v1/organization/${w.orgId}`, { 'If-Match': orgTag }, { require_if_match: false }).expect(
        200,
      );
    }
    await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Untagged again' }).expect(200);
  });
});

describe('require_if_match on version restore, call PATCH, test-case DELETE and chunk DELETE', () => {
  it('answers 428 without If-Match and 412 with a stale one, writing nothing; the current tag passes', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Version one' }).expect(200);
    const { body: versions } = await call('get', `/v1/agents/${agentId}/versions`).expect(200);
    await call('patch', `/v1/agents/${agentId}`, {}, { name: 'Version two' }).expect(200);
    const created = await call(
      'post',
      `/v1/agents/${agentId}/calls`,
      {},
      {
        call_id: `if-match-${Date.now()}`,
        phone_number: '+49301234567',
        duration: 10,
      },
    ).expect(201);
    const callPath = `/v1/agents/${agentId}/calls/${created.body.id}`;
    const testCase = await call(
      'post',
      `/v1/agents/${agentId}/test-cases`,
      {},
      {
        name: 'Monday',
        input: { at: '2026-11-23T10:00:00+01:00' },
        expect: { accepting_calls: true },
      },
    ).expect(201);
    const casePath = `/v1/agents/${agentId}/test-cases/${testCase.body.id}`;
    const doc = await call('post', `/v1/agents/${agentId}/knowledge-base`, {}, { title: 'Chunked', content: '' });
    expect(doc.status).toBe(201);
    const chunksPath = `/v1/agents/${agentId}/knowledge-base/${doc.body.id}/chunks`;
    await call('post', chunksPath, {}, { chunks: [{ content: 'One.', chunk_index: 0 }] }).expect(201);
    const restorePath = `/v1/agents/${agentId}/versions/${versions.data[0].version}/restore`;
    const before = async () => ({
      agent: await ctx.db('agents').where({ id: agentId }).first('name'),
      call: await ctx.db('calls').where({ id: created.body.id }).first('done'),
      cases: Number((await ctx.db('agent_test_cases').where({ agent_id: agentId }).count({ n: '*' }).first())!.n),
      chunks: Number((await ctx.db('kb_chunks').where({ document_id: doc.body.id }).count({ n: '*' }).first())!.n),
    });
    const writes = (headers: Record<string, string>) => [
      call('post', restorePath, headers),
      call('patch', callPath, headers, { done: true }),
      call('delete', casePath, headers),
      call('delete', chunksPath, headers),
    ];
    await call('patch', `/v1/organization/${w.orgId}`, {}, { require_if_match: true }).expect(200);
    try {
      const state = await before();
      for (const write of writes({})) {
        const res = await write.expect(428);
        expect(res.body.error.code).toBe('PRECONDITION_REQUIRED');
      }
      for (const write of writes({ 'If-Match': '"stale"' })) {
        const res = await write.expect(412);
        expect(res.body.error.code).toBe('PRECONDITION_FAILED');
      }
      expect(await before()).toEqual(state);

      const agentTag = tagOf(await call('get', `/v1/agents/${agentId}`).expect(200));
      await call('post', restorePath, { 'If-Match': agentTag }).expect(201);
      expect((await ctx.db('agents').where({ id: agentId }).first('name')).name).toBe('Version one');
      const callTag = tagOf(await call('get', callPath).expect(200));
      const patched = await call('patch', callPath, { 'If-Match': callTag }, { done: true }).expect(200);
      expect(tagOf(patched)).toBe(tagOf(await call('get', callPath).expect(200)));
      await call('delete', casePath, { 'If-Match': tagOf(testCase) }).expect(204);
      const docTag = tagOf(await call('get', `/v1/agents/${agentId}/knowledge-base/${doc.body.id}`).expect(200));
      await call('delete', chunksPath, { 'If-Match': docTag }).expect(204);
      expect(await before()).toMatchObject({ call: { done: true }, cases: 0, chunks: 0 });
    } finally {
      const orgTag = tagOf(await call('get', `/v1/organization/${w.orgId}`).expect(200));
      await call('patch', `/v1/organization/${w.orgId}`, { 'If-Match': orgTag }, { require_if_match: false }).expect(
        200,
      );
    }
  });
});

describe('/v1/me', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412', async () => {
    const me = (method: 'get' | 'patch', headers: Record<string, string> = {}, body?: object) => {
      const request = ctx.http[method]('/v1/me').set('Authorization', `Bearer ${w.token}`);
      for (const [name, value] of Object.entries(headers)) request.set(name, value);
      return body ? request.send(body) : request;
    };
    const tag = tagOf(await me('get').expect(200));
    await me('get', { 'If-None-Match': tag }).expect(304);
    const written = await me('patch', { 'If-Match': tag }, { name: 'Renamed' }).expect(200);
    expect(tagOf(written)).toBe(tagOf(await me('get').expect(200)));
    const stale = await me('patch', { 'If-Match': tag }, { name: 'Again' }).expect(412);
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
  });
});

describe('knowledge-base documents', () => {
  it('GET and PATCH carry the ETag; a stale If-Match is 412; DELETE checks it too', async () => {
    const agentId = await ctx.build.freshAgent(w.orgId);
    const created = await call(
      'post',
      `/v1/agents/${agentId}/knowledge-base`,
      {},
      { title: 'Hours', content: '' },
    ).expect(201);
    const path = `/v1/agents/${agentId}/knowledge-base/${created.body.id}`;
    expect(tagOf(created)).toBe(tagOf(await call('get', path).expect(200)));
    let n = 0;
    await expectConditionalResource({ path, agentId, method: 'patch', body: () => ({ title: `Hours ${++n}` }) });
    await call('delete', path, { 'If-Match': tagOf(created) }).expect(412);
    await call('delete', path, { 'If-Match': tagOf(await call('get', path).expect(200)) }).expect(204);
  });
});

describe('API keys', () => {
  it('GET /v1/api-keys/{keyId} and PATCH carry the ETag; a stale If-Match is 412', async () => {
    const asAdmin = (method: Method, path: string, headers: Record<string, string> = {}, body?: object) => {
      const request = ctx.http[method](path).set('Authorization', `Bearer ${w.token}`);
      for (const [name, value] of Object.entries(headers)) request.set(name, value);
      return body ? request.send(body) : request;
    };
    const created = await asAdmin(
      'post',
      '/v1/api-keys',
      {},
      { name: 'Sync job', permissions: ['agents:read'] },
    ).expect(201);
    const path = `/v1/api-keys/${created.body.id}`;
    const tag = tagOf(await asAdmin('get', path).expect(200));
    await asAdmin('get', path, { 'If-None-Match': tag }).expect(304);
    const written = await asAdmin('patch', path, { 'If-Match': tag }, { name: 'Sync job 2' }).expect(200);
    expect(tagOf(written)).toBe(tagOf(await asAdmin('get', path).expect(200)));
    const stale = await asAdmin('patch', path, { 'If-Match': tag }, { name: 'Sync job 3' }).expect(412);
    expect(stale.body.error.message).toContain(tagOf(written));
    await asAdmin('delete', path, { 'If-Match': tag }).expect(412);
    await asAdmin('delete', path, { 'If-Match': tagOf(written) }).expect(204);
  });
});

describe('organization knowledge-base documents', () => {
  it('GET, PATCH and DELETE with the dashboard token; a grant change changes the ETag', async () => {
    const asAdmin = (method: Method, path: string, headers: Record<string, string> = {}, body?: object) => {
      const request = ctx.http[method](path).set('Authorization', `Bearer ${w.token}`);
      for (const [name, value] of Object.entries(headers)) request.set(name, value);
      return body ? request.send(body) : request;
    };
    const base = `/v1/organization/${w.orgId}/knowledge-base`;
    const created = await asAdmin(
      'post',
      base,
      {},
      { title: 'Company', content: 'Opening hours 8-18', agent_ids: [] },
    ).expect(201);
    const path = `${base}/${created.body.id}`;
    const tag = tagOf(await asAdmin('get', path).expect(200));
    expect(tagOf(created)).toBe(tag);
    await asAdmin('get', path, { 'If-None-Match': tag }).expect(304);
    await asAdmin('put', `${path}/grants`, {}, { agent_ids: [w.agentId] }).expect(200);
    const granted = tagOf(await asAdmin('get', path).expect(200));
    expect(granted).not.toBe(tag);
    await asAdmin('patch', path, { 'If-Match': tag }, { title: 'Stale' }).expect(412);
    const written = await asAdmin('patch', path, { 'If-Match': granted }, { title: 'Company 2' }).expect(200);
    expect(tagOf(written)).toBe(tagOf(await asAdmin('get', path).expect(200)));
    await asAdmin('delete', path, { 'If-Match': granted }).expect(412);
    await asAdmin('delete', path, { 'If-Match': tagOf(written) }).expect(204);
  });
});
