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
  expect(next.body).toEqual(written.body);

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
    const created = await call('post', '/v1/agents', {}, { name: 'First', phone_number: ctx.build.phone() }).expect(201);
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
