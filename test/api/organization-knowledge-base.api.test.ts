import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import { OrganizationDocumentSchema } from '../../src/modules/knowledge-base/knowledge-base.schemas.js';

let ctx: TestContext;
let w: World;
let second: string;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  second = (await ctx.build.agent(w.orgId, { name: 'Second' })).id;
});
afterAll(() => ctx.close());

const orgKb = (orgId: string) => `/v1/organization/${orgId}/knowledge-base`;
const bearer = (token: string) => `Bearer ${token}`;
const documentRow = (id: string) => ctx.db('kb_documents').where({ id }).first();
const grantsOf = async (id: string) =>
  (await ctx.db('kb_document_grants').where({ document_id: id }).orderBy('agent_id').select('agent_id')).map(
    (g) => g.agent_id,
  );

async function createOrgDocument(body: Record<string, unknown> = {}) {
  const res = await ctx.http
    .post(orgKb(w.orgId))
    .set('Authorization', bearer(w.token))
    .send({ title: 'Holidays', content: 'The office closes between Christmas and New Year.', ...body })
    .expect(201);
  return res.body as { id: string; [field: string]: unknown };
}

async function agentSees(agentId: string, documentId: string): Promise<boolean> {
  const res = await ctx.http.get(`/v1/agents/${agentId}/knowledge-base/${documentId}`).set('X-API-Key', w.key);
  return res.status === 200;
}

describe('POST /v1/organization/{orgId}/knowledge-base', () => {
  it('creates an organization document granted to the given agents, processed like any other', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId], language: 'en' });
    expectSchema({ body: doc }, OrganizationDocumentSchema);
    expect(doc).toMatchObject({
      agent_id: null,
      org_id: w.orgId,
      scope: 'organization',
      source_type: 'manual',
      status: 'pending',
      language: 'en',
      agent_ids: [w.agentId],
    });
    expect(await grantsOf(doc.id)).toEqual([w.agentId]);
    expect(await agentSees(w.agentId, doc.id)).toBe(true);
    expect(await agentSees(second, doc.id)).toBe(false);
    await runKnowledgeBaseJobs(ctx);
    expect(await documentRow(doc.id)).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('refuses an API key with 401, even one holding every permission, and writes nothing', async () => {
    const before = await ctx.db('kb_documents').count({ n: '*' }).first();
    const res = await ctx.http
      .post(orgKb(w.orgId))
      .set('X-API-Key', w.key)
      .send({ title: 'T', content: 'C' })
      .expect(401);
    expect(res.body.error).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'Organization knowledge base management requires a dashboard login token',
    });
    await ctx.http.get(orgKb(w.orgId)).set('X-API-Key', w.key).expect(401);
    expect(await ctx.db('kb_documents').count({ n: '*' }).first()).toEqual(before);
  });

  it('refuses a member (read-only role) with 403 and writes nothing', async () => {
    const member = await ctx.build.user(w.orgId, 'member');
    const before = await ctx.db('kb_documents').count({ n: '*' }).first();
    const res = await ctx.http
      .post(orgKb(w.orgId))
      .set('Authorization', bearer(ctx.build.token(member.id)))
      .send({ title: 'T', content: 'C' })
      .expect(403);
    expect(res.body.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'Dashboard role lacks required permission: kb:write',
    });
    expect(await ctx.db('kb_documents').count({ n: '*' }).first()).toEqual(before);
  });

  it('rejects agents of another organization and unknown agents, naming each, and writes nothing', async () => {
    const other = await ctx.build.world();
    const before = await ctx.db('kb_documents').count({ n: '*' }).first();
    const res = await ctx.http
      .post(orgKb(w.orgId))
      .set('Authorization', bearer(w.token))
      .send({ title: 'T', content: 'C', agent_ids: [w.agentId, other.agentId, '00000000-0000-4000-8000-000000000000'] })
      .expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'agent_ids[1]', message: 'Agent not found in this organization' },
      { field: 'agent_ids[2]', message: 'Agent not found in this organization' },
    ]);
    expect(await ctx.db('kb_documents').count({ n: '*' }).first()).toEqual(before);
  });

  it('lists every problem of an invalid body', async () => {
    const res = await ctx.http
      .post(orgKb(w.orgId))
      .set('Authorization', bearer(w.token))
      .send({ title: '', language: 'it', agent_ids: ['nope', 'nope'] })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'agent_ids',
      'agent_ids[0]',
      'agent_ids[1]',
      'content',
      'language',
      'title',
    ]);
  });

  it('is 404 for an organization out of reach and 400 naming orgId when it is not a UUID', async () => {
    const other = await ctx.build.world();
    await ctx.http
      .post(orgKb(other.orgId))
      .set('Authorization', bearer(w.token))
      .send({ title: 'T', content: 'C' })
      .expect(404);
    expect(await ctx.db('kb_documents').where({ organization_id: other.orgId }).first()).toBeUndefined();
    const res = await ctx.http.get(orgKb('nope')).set('Authorization', bearer(w.token)).expect(400);
    expect(res.body.error.details).toEqual([{ field: 'orgId', message: 'Must be a UUID' }]);
  });
});

describe('reading organization documents', () => {
  it('lists only organization documents, newest first, with their grants; a member may read', async () => {
    const world = await ctx.build.world();
    const agentDoc = await ctx.http
      .post(`/v1/agents/${world.agentId}/knowledge-base`)
      .set('X-API-Key', world.key)
      .send({ title: 'Agent doc', content: 'x' })
      .expect(201);
    const first = await ctx.http
      .post(orgKb(world.orgId))
      .set('Authorization', bearer(world.token))
      .send({ title: 'A', content: 'a' })
      .expect(201);
    ctx.clock.advance(1000);
    const latest = await ctx.http
      .post(orgKb(world.orgId))
      .set('Authorization', bearer(world.token))
      .send({ title: 'B', content: 'b', agent_ids: [world.agentId] })
      .expect(201);
    const member = await ctx.build.user(world.orgId, 'member');
    const res = await ctx.http
      .get(orgKb(world.orgId))
      .set('Authorization', bearer(ctx.build.token(member.id)))
      .expect(200);
    expectSchema(res, paginated(OrganizationDocumentSchema));
    expect(res.body.data.map((d: { id: string; agent_ids: string[] }) => [d.id, d.agent_ids])).toEqual([
      [latest.body.id, [world.agentId]],
      [first.body.id, []],
    ]);
    expect(res.body.data.map((d: { id: string }) => d.id)).not.toContain(agentDoc.body.id);
    const one = await ctx.http
      .get(`${orgKb(world.orgId)}/${latest.body.id}`)
      .set('Authorization', bearer(world.token))
      .expect(200);
    expect(one.body).toMatchObject({ title: 'B', agent_ids: [world.agentId], scope: 'organization' });
  });

  it('is 404 for an agent document asked for as an organization document, and for one of another organization', async () => {
    const agentDoc = await ctx.http
      .post(`/v1/agents/${w.agentId}/knowledge-base`)
      .set('X-API-Key', w.key)
      .send({ title: 'Agent doc', content: 'x' })
      .expect(201);
    await ctx.http
      .get(`${orgKb(w.orgId)}/${agentDoc.body.id}`)
      .set('Authorization', bearer(w.token))
      .expect(404);
    const other = await ctx.build.world();
    const theirs = await ctx.http
      .post(orgKb(other.orgId))
      .set('Authorization', bearer(other.token))
      .send({ title: 'T', content: 'C' })
      .expect(201);
    await ctx.http
      .get(`${orgKb(w.orgId)}/${theirs.body.id}`)
      .set('Authorization', bearer(w.token))
      .expect(404);
    await ctx.http
      .get(`${orgKb(other.orgId)}/${theirs.body.id}`)
      .set('Authorization', bearer(w.token))
      .expect(404);
  });
});

describe('PUT /v1/organization/{orgId}/knowledge-base/{documentId}/grants', () => {
  it('replaces the agents the document is granted to, and the agents see it accordingly', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId] });
    const res = await ctx.http
      .put(`${orgKb(w.orgId)}/${doc.id}/grants`)
      .set('Authorization', bearer(w.token))
      .send({ agent_ids: [second] })
      .expect(200);
    expect(res.body).toEqual({ document_id: doc.id, agent_ids: [second] });
    expect(await agentSees(w.agentId, doc.id)).toBe(false);
    expect(await agentSees(second, doc.id)).toBe(true);
    await ctx.http
      .put(`${orgKb(w.orgId)}/${doc.id}/grants`)
      .set('Authorization', bearer(w.token))
      .send({ agent_ids: [] })
      .expect(200);
    expect(await grantsOf(doc.id)).toEqual([]);
  });

  it('rejects an agent of another organization and keeps the old grants', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId] });
    const other = await ctx.build.world();
    const res = await ctx.http
      .put(`${orgKb(w.orgId)}/${doc.id}/grants`)
      .set('Authorization', bearer(w.token))
      .send({ agent_ids: [second, other.agentId] })
      .expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'agent_ids[1]', message: 'Agent not found in this organization' },
    ]);
    expect(await grantsOf(doc.id)).toEqual([w.agentId]);
  });

  it('is 403 for a member and 401 for an API key, keeping the grants', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId] });
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .put(`${orgKb(w.orgId)}/${doc.id}/grants`)
      .set('Authorization', bearer(ctx.build.token(member.id)))
      .send({ agent_ids: [] })
      .expect(403);
    await ctx.http
      .put(`${orgKb(w.orgId)}/${doc.id}/grants`)
      .set('X-API-Key', w.key)
      .send({ agent_ids: [] })
      .expect(401);
    expect(await grantsOf(doc.id)).toEqual([w.agentId]);
  });
});

describe('PATCH and DELETE /v1/organization/{orgId}/knowledge-base/{documentId}', () => {
  it('reprocesses on a content or language change but not on a title change', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId] });
    await runKnowledgeBaseJobs(ctx);
    const url = `${orgKb(w.orgId)}/${doc.id}`;
    const titled = await ctx.http
      .patch(url)
      .set('Authorization', bearer(w.token))
      .send({ title: 'Closing days', status: 'error' })
      .expect(200);
    expect(titled.body).toMatchObject({ title: 'Closing days', status: 'ready', agent_ids: [w.agentId] });
    const relanguaged = await ctx.http
      .patch(url)
      .set('Authorization', bearer(w.token))
      .send({ language: 'de' })
      .expect(200);
    expect(relanguaged.body).toMatchObject({ language: 'de', status: 'pending', chunk_count: 0 });
    await runKnowledgeBaseJobs(ctx);
    expect((await ctx.db('kb_chunks').where({ document_id: doc.id }).first()).ts_config).toBe('german');
    const rewritten = await ctx.http
      .patch(url)
      .set('Authorization', bearer(w.token))
      .send({ content: 'Neu.' })
      .expect(200);
    expect(rewritten.body).toMatchObject({ content: 'Neu.', status: 'pending' });
  });

  it('is 403 for a member and changes nothing', async () => {
    const doc = await createOrgDocument();
    const before = await documentRow(doc.id);
    const member = await ctx.build.user(w.orgId, 'member');
    await ctx.http
      .patch(`${orgKb(w.orgId)}/${doc.id}`)
      .set('Authorization', bearer(ctx.build.token(member.id)))
      .send({ title: 'X' })
      .expect(403);
    expect(await documentRow(doc.id)).toEqual(before);
  });

  it('deletes the document with its chunks and grants, so the agents no longer see it', async () => {
    const doc = await createOrgDocument({ agent_ids: [w.agentId] });
    await runKnowledgeBaseJobs(ctx);
    await ctx.http
      .delete(`${orgKb(w.orgId)}/${doc.id}`)
      .set('Authorization', bearer(w.token))
      .expect(204);
    expect(await documentRow(doc.id)).toBeUndefined();
    expect(await grantsOf(doc.id)).toEqual([]);
    expect(await ctx.db('kb_chunks').where({ document_id: doc.id }).first()).toBeUndefined();
    expect(await agentSees(w.agentId, doc.id)).toBe(false);
  });

  it('is 404 to delete an agent document through the organization endpoint, which stays', async () => {
    const agentDoc = await ctx.http
      .post(`/v1/agents/${w.agentId}/knowledge-base`)
      .set('X-API-Key', w.key)
      .send({ title: 'Agent doc', content: 'x' })
      .expect(201);
    await ctx.http
      .delete(`${orgKb(w.orgId)}/${agentDoc.body.id}`)
      .set('Authorization', bearer(w.token))
      .expect(404);
    expect(await documentRow(agentDoc.body.id)).toBeDefined();
  });
});
