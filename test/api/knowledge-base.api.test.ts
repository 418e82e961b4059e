import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { ChunkSchema, DocumentSchema } from '../../src/modules/knowledge-base/knowledge-base.schemas.js';

let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const kb = (agentId: string) => `/v1/agents/${agentId}/knowledge-base`;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function createDocument(world: World, body: Record<string, unknown> = {}) {
  const res = await ctx.http
    .post(kb(world.agentId))
    .set('X-API-Key', world.key)
    .send({ title: 'Opening hours', content: 'We are open from 8 to 17.', ...body })
    .expect(201);
  return res.body as { id: string; [field: string]: unknown };
}

/** An organization document granted to `agentIds`, written through the token-only endpoint. */
async function createOrganizationDocument(world: World, agentIds: string[], title = 'Company FAQ') {
  const res = await ctx.http
    .post(`/v1/organization/${world.orgId}/knowledge-base`)
    .set('Authorization', `Bearer ${world.token}`)
    .send({ title, content: 'Shared company knowledge.', agent_ids: agentIds })
    .expect(201);
  return res.body as { id: string };
}

const documentRow = (id: string) => ctx.db('kb_documents').where({ id }).first();
const chunkCount = async (documentId: string) =>
  Number((await ctx.db('kb_chunks').where({ document_id: documentId }).count({ n: '*' }).first())?.n);

describe('POST /v1/agents/{agentId}/knowledge-base', () => {
  it('creates a manual agent document in pending and queues its processing', async () => {
    const res = await ctx.http
      .post(kb(w.agentId))
      .set('X-API-Key', w.key)
      .send({ title: 'Parking', content: 'Customer parking is in the yard.', status: 'ready', scope: 'organization' })
      .expect(201);
    expectSchema(res, DocumentSchema);
    expect(res.body).toMatchObject({
      agent_id: w.agentId,
      org_id: w.orgId,
      scope: 'agent',
      title: 'Parking',
      content: 'Customer parking is in the yard.',
      source_type: 'manual',
      source_url: null,
      status: 'pending',
      chunk_count: 0,
      error_message: null,
    });
    expect(await runKnowledgeBaseJobs(ctx)).toBeGreaterThanOrEqual(1);
    expect((await documentRow(res.body.id)).status).toBe('ready');
  });

  it('lists every problem of an invalid body and writes nothing', async () => {
    const before = await ctx.db('kb_documents').count({ n: '*' }).first();
    const res = await ctx.http.post(kb(w.agentId)).set('X-API-Key', w.key).send({ title: '', content: 5 }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['content', 'title']);
    expect(await ctx.db('kb_documents').count({ n: '*' }).first()).toEqual(before);
  });

  it('rejects a title over 500 and a content over 100000 characters', async () => {
    const res = await ctx.http
      .post(kb(w.agentId))
      .set('X-API-Key', w.key)
      .send({ title: 'x'.repeat(501), content: 'y'.repeat(100_001) })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['content', 'title']);
  });

  it('accepts the bounds: a 500-character title and 100000 characters of content', async () => {
    await ctx.http
      .post(kb(w.agentId))
      .set('X-API-Key', w.key)
      .send({ title: 't'.repeat(500), content: 'ä'.repeat(100_000) })
      .expect(201);
  });

  it('is 403 FORBIDDEN without kb:write and writes nothing', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    const before = await ctx.db('kb_documents').count({ n: '*' }).first();
    const res = await ctx.http
      .post(kb(w.agentId))
      .set('X-API-Key', key.key)
      .send({ title: 'T', content: 'C' })
      .expect(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'API key lacks required permission: kb:write' });
    expect(await ctx.db('kb_documents').count({ n: '*' }).first()).toEqual(before);
  });

  it('is 403 AGENT_NOT_ACCESSIBLE for an agent outside the key scope and writes nothing', async () => {
    const key = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    const res = await ctx.http
      .post(kb(w.agentId))
      .set('X-API-Key', key.key)
      .send({ title: 'T', content: 'C' })
      .expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    expect(await ctx.db('kb_documents').where({ agent_id: w.agentId, title: 'T' }).first()).toBeUndefined();
  });

  it('is 404 for an agent of another organization', async () => {
    const other = await ctx.build.world();
    await ctx.http.post(kb(other.agentId)).set('X-API-Key', w.key).send({ title: 'T', content: 'C' }).expect(404);
    expect(await ctx.db('kb_documents').where({ agent_id: other.agentId }).first()).toBeUndefined();
  });

  it('is 400 naming agentId when it is not a UUID', async () => {
    const res = await ctx.http.post(kb('nope')).set('X-API-Key', w.key).send({ title: 'T', content: 'C' }).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });
});

describe('GET /v1/agents/{agentId}/knowledge-base', () => {
  it("lists the agent's own and its granted organization documents newest first, each with its scope", async () => {
    const world = await ctx.build.world();
    const sibling = await ctx.build.agent(world.orgId);
    const own = await createDocument(world, { title: 'Own' });
    ctx.clock.advance(1000);
    const granted = await createOrganizationDocument(world, [world.agentId], 'Granted');
    ctx.clock.advance(1000);
    await createOrganizationDocument(world, [sibling.id], 'Not granted');
    await ctx.http
      .post(kb(sibling.id))
      .set('X-API-Key', world.key)
      .send({ title: 'Sibling', content: 'Other agent.' })
      .expect(201);

    const res = await ctx.http.get(kb(world.agentId)).set('X-API-Key', world.key).expect(200);
    expect(res.body.data.map((d: { id: string; scope: string }) => [d.id, d.scope])).toEqual([
      [granted.id, 'organization'],
      [own.id, 'agent'],
    ]);
    expect(res.body.data[0]).toMatchObject({
      agent_id: null,
      org_id: world.orgId,
      title: 'Granted',
      content: 'Shared company knowledge.',
    });
    expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
  });

  it('filters by status', async () => {
    const world = await ctx.build.world();
    const first = await createDocument(world, { title: 'First' });
    await runKnowledgeBaseJobs(ctx);
    const second = await createDocument(world, { title: 'Second' });
    const pending = await ctx.http
      .get(`${kb(world.agentId)}?status=pending`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(pending.body.data.map((d: { id: string }) => d.id)).toEqual([second.id]);
    const ready = await ctx.http
      .get(`${kb(world.agentId)}?status=ready`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(ready.body.data.map((d: { id: string }) => d.id)).toEqual([first.id]);
  });

  it('pages with page and limit', async () => {
    const world = await ctx.build.world();
    for (const title of ['a', 'b', 'c']) {
      await createDocument(world, { title });
      ctx.clock.advance(1000);
    }
    const res = await ctx.http
      .get(`${kb(world.agentId)}?page=2&limit=2`)
      .set('X-API-Key', world.key)
      .expect(200);
    expect(res.body.data.map((d: { title: string }) => d.title)).toEqual(['a']);
    expect(res.body.pagination).toEqual({ page: 2, limit: 2, total: 3, pages: 2 });
  });

  it('rejects an unknown status and a bad limit in one 400', async () => {
    const res = await ctx.http
      .get(`${kb(w.agentId)}?status=done&limit=0`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['limit', 'status']);
  });

  it('is 403 without kb:read, 403 AGENT_NOT_ACCESSIBLE out of scope and 404 for another organization', async () => {
    const noRead = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:write'] });
    expect((await ctx.http.get(kb(w.agentId)).set('X-API-Key', noRead.key).expect(403)).body.error.message).toBe(
      'API key lacks required permission: kb:read',
    );
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    expect((await ctx.http.get(kb(w.agentId)).set('X-API-Key', scoped.key).expect(403)).body.error.code).toBe(
      'AGENT_NOT_ACCESSIBLE',
    );
    const other = await ctx.build.world();
    await ctx.http.get(kb(other.agentId)).set('X-API-Key', w.key).expect(404);
  });
});

describe('GET /v1/agents/{agentId}/knowledge-base/{documentId}', () => {
  it('returns an own document and a granted organization document', async () => {
    const own = await createDocument(w);
    const granted = await createOrganizationDocument(w, [w.agentId]);
    const a = await ctx.http
      .get(`${kb(w.agentId)}/${own.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(a.body).toMatchObject({ id: own.id, scope: 'agent' });
    expectSchema(a, DocumentSchema);
    const b = await ctx.http
      .get(`${kb(w.agentId)}/${granted.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(b.body).toMatchObject({ id: granted.id, scope: 'organization', agent_id: null });
  });

  it("is 404 for another agent's document, an ungranted organization document and an unknown id", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await ctx.http
      .post(kb(sibling.id))
      .set('X-API-Key', w.key)
      .send({ title: 'S', content: 'S' })
      .expect(201);
    const ungranted = await createOrganizationDocument(w, []);
    for (const id of [theirs.body.id, ungranted.id, UNKNOWN]) {
      const res = await ctx.http
        .get(`${kb(w.agentId)}/${id}`)
        .set('X-API-Key', w.key)
        .expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('is 400 naming documentId when it is not a UUID', async () => {
    const res = await ctx.http
      .get(`${kb(w.agentId)}/abc`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(res.body.error.details).toEqual([{ field: 'documentId', message: 'Must be a UUID' }]);
  });
});

describe('PATCH /v1/agents/{agentId}/knowledge-base/{documentId}', () => {
  it('changes only the title of a ready document and keeps its status and chunks', async () => {
    const doc = await createDocument(w);
    await runKnowledgeBaseJobs(ctx);
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .send({ title: 'Hours' })
      .expect(200);
    expect(res.body).toMatchObject({
      title: 'Hours',
      status: 'ready',
      chunk_count: 1,
      content: 'We are open from 8 to 17.',
    });
    expect(await chunkCount(doc.id)).toBe(1);
    expect(await runKnowledgeBaseJobs(ctx)).toBe(0);
  });

  it('sends a document with changed content back to pending, and the pipeline rebuilds its chunks', async () => {
    const doc = await createDocument(w);
    await runKnowledgeBaseJobs(ctx);
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .send({ content: 'New hours.\n\nWe now open at 7.' })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'pending', chunk_count: 0, content: 'New hours.\n\nWe now open at 7.' });
    expect(await chunkCount(doc.id)).toBe(0);
    await runKnowledgeBaseJobs(ctx);
    const chunks = await ctx.http
      .get(`${kb(w.agentId)}/${doc.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(200);
    expectSchema(chunks, paginated(ChunkSchema));
    expect(chunks.body.data.map((c: { content: string }) => c.content)).toEqual(['New hours.\n\nWe now open at 7.']);
  });

  it('ignores every other field, including status, and keeps a document whose content is unchanged as it is', async () => {
    const doc = await createDocument(w);
    await runKnowledgeBaseJobs(ctx);
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .send({
        content: 'We are open from 8 to 17.',
        status: 'error',
        scope: 'organization',
        agent_id: UNKNOWN,
        chunk_count: 9,
      })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'ready', scope: 'agent', agent_id: w.agentId, chunk_count: 1 });
  });

  it('rejects an empty title and a non-string content with both fields named, and changes nothing', async () => {
    const doc = await createDocument(w);
    const before = await documentRow(doc.id);
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .send({ title: '', content: [] })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['content', 'title']);
    expect(await documentRow(doc.id)).toEqual(before);
  });

  it('is 403 FORBIDDEN for an organization document and changes nothing', async () => {
    const granted = await createOrganizationDocument(w, [w.agentId]);
    const before = await documentRow(granted.id);
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${granted.id}`)
      .set('X-API-Key', w.key)
      .send({ title: 'Mine now' })
      .expect(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(await documentRow(granted.id)).toEqual(before);
  });

  it("is 404 for another agent's document and changes nothing", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await ctx.http
      .post(kb(sibling.id))
      .set('X-API-Key', w.key)
      .send({ title: 'S', content: 'S' })
      .expect(201);
    await ctx.http
      .patch(`${kb(w.agentId)}/${theirs.body.id}`)
      .set('X-API-Key', w.key)
      .send({ title: 'Stolen' })
      .expect(404);
    expect((await documentRow(theirs.body.id)).title).toBe('S');
  });

  it('is 403 without kb:write and 403 AGENT_NOT_ACCESSIBLE out of scope, changing nothing', async () => {
    const doc = await createDocument(w);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', readOnly.key)
      .send({ title: 'X' })
      .expect(403);
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [] });
    const res = await ctx.http
      .patch(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', scoped.key)
      .send({ title: 'X' })
      .expect(403);
    expect(res.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    expect((await documentRow(doc.id)).title).toBe('Opening hours');
  });
});

describe('DELETE /v1/agents/{agentId}/knowledge-base/{documentId}', () => {
  it('deletes the document with its chunks and answers 204 without a body', async () => {
    const doc = await createDocument(w);
    await runKnowledgeBaseJobs(ctx);
    expect(await chunkCount(doc.id)).toBe(1);
    const res = await ctx.http
      .delete(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .expect(204);
    expect(res.text).toBe('');
    expect(await documentRow(doc.id)).toBeUndefined();
    expect(await chunkCount(doc.id)).toBe(0);
  });

  it('is 403 FORBIDDEN for an organization document, which stays', async () => {
    const granted = await createOrganizationDocument(w, [w.agentId]);
    await ctx.http
      .delete(`${kb(w.agentId)}/${granted.id}`)
      .set('X-API-Key', w.key)
      .expect(403);
    expect(await documentRow(granted.id)).toBeDefined();
  });

  it("is 404 for another agent's document, which stays, and 403 without kb:write", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await ctx.http
      .post(kb(sibling.id))
      .set('X-API-Key', w.key)
      .send({ title: 'S', content: 'S' })
      .expect(201);
    await ctx.http
      .delete(`${kb(w.agentId)}/${theirs.body.id}`)
      .set('X-API-Key', w.key)
      .expect(404);
    expect(await documentRow(theirs.body.id)).toBeDefined();
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    await ctx.http
      .delete(`${kb(sibling.id)}/${theirs.body.id}`)
      .set('X-API-Key', readOnly.key)
      .expect(403);
    expect(await documentRow(theirs.body.id)).toBeDefined();
  });
});

describe('chunks of a document', () => {
  it('lists the chunks in order, paginated', async () => {
    const paragraphs = Array.from(
      { length: 5 },
      (_, i) => `Paragraph ${i}. ${'Lorem ipsum dolor sit amet. '.repeat(21)}`,
    );
    const doc = await createDocument(w, { content: paragraphs.join('\n\n') });
    await runKnowledgeBaseJobs(ctx);
    const ready = await ctx.http
      .get(`${kb(w.agentId)}/${doc.id}`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(ready.body).toMatchObject({ status: 'ready', chunk_count: 5 });
    expectSchema(ready, DocumentSchema);
    const page = await ctx.http
      .get(`${kb(w.agentId)}/${doc.id}/chunks?limit=2&page=2`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 5, pages: 3 });
    expect(page.body.data.map((c: { position: number }) => c.position)).toEqual([2, 3]);
    expect(page.body.data[0]).toMatchObject({ document_id: doc.id, content: paragraphs[2]!.trim() });
  });

  it('lists the chunks of a granted organization document', async () => {
    const granted = await createOrganizationDocument(w, [w.agentId]);
    await runKnowledgeBaseJobs(ctx);
    const res = await ctx.http
      .get(`${kb(w.agentId)}/${granted.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(200);
    expect(res.body.data.map((c: { content: string }) => c.content)).toEqual(['Shared company knowledge.']);
  });

  it('removes all chunks with DELETE .../chunks and sets chunk_count to 0', async () => {
    const doc = await createDocument(w);
    await runKnowledgeBaseJobs(ctx);
    await ctx.http
      .delete(`${kb(w.agentId)}/${doc.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(204);
    expect(await chunkCount(doc.id)).toBe(0);
    expect((await documentRow(doc.id)).chunk_count).toBe(0);
  });

  it('is 403 FORBIDDEN to delete the chunks of an organization document, which keep', async () => {
    const granted = await createOrganizationDocument(w, [w.agentId]);
    await runKnowledgeBaseJobs(ctx);
    await ctx.http
      .delete(`${kb(w.agentId)}/${granted.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(403);
    expect(await chunkCount(granted.id)).toBe(1);
  });

  it("is 404 for the chunks of another agent's document and 400 for a malformed documentId", async () => {
    const sibling = await ctx.build.agent(w.orgId);
    const theirs = await ctx.http
      .post(kb(sibling.id))
      .set('X-API-Key', w.key)
      .send({ title: 'S', content: 'S' })
      .expect(201);
    await runKnowledgeBaseJobs(ctx);
    await ctx.http
      .get(`${kb(w.agentId)}/${theirs.body.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(404);
    await ctx.http
      .delete(`${kb(w.agentId)}/${theirs.body.id}/chunks`)
      .set('X-API-Key', w.key)
      .expect(404);
    expect(await chunkCount(theirs.body.id)).toBe(1);
    const res = await ctx.http
      .get(`${kb(w.agentId)}/x/chunks`)
      .set('X-API-Key', w.key)
      .expect(400);
    expect(res.body.error.details).toEqual([{ field: 'documentId', message: 'Must be a UUID' }]);
  });

  it('is 403 without kb:read for the list and without kb:write for the delete', async () => {
    const doc = await createDocument(w);
    const writeOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:write'] });
    await ctx.http
      .get(`${kb(w.agentId)}/${doc.id}/chunks`)
      .set('X-API-Key', writeOnly.key)
      .expect(403);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    await ctx.http
      .delete(`${kb(w.agentId)}/${doc.id}/chunks`)
      .set('X-API-Key', readOnly.key)
      .expect(403);
  });
});

describe('knowledge-base routes in the API description', () => {
  it('lists every route with its methods, and a wrong method is 405', async () => {
    const doc = await ctx.http.get('/v1/openapi.json').expect(200);
    const methods = (path: string) => Object.keys(doc.body.paths[path] ?? {}).sort();
    expect(methods('/v1/agents/{agentId}/knowledge-base')).toEqual(['get', 'post']);
    expect(methods('/v1/agents/{agentId}/knowledge-base/{documentId}')).toEqual(['delete', 'get', 'patch']);
    expect(methods('/v1/agents/{agentId}/knowledge-base/{documentId}/chunks')).toEqual(['delete', 'get', 'post']);
    expect(methods('/v1/organization/{orgId}/knowledge-base')).toEqual(['get', 'post']);
    expect(methods('/v1/organization/{orgId}/knowledge-base/{documentId}')).toEqual(['delete', 'get', 'patch']);
    expect(methods('/v1/organization/{orgId}/knowledge-base/{documentId}/grants')).toEqual(['put']);
    await ctx.http.put(kb(w.agentId)).set('X-API-Key', w.key).send({}).expect(405);
  });
});
