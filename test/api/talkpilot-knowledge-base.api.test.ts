import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import { paginated } from '../../src/openapi/common.js';
import {
  ChunkSchema,
  CreatedChunksSchema,
  DocumentSchema,
  SearchResultSchema,
} from '../../src/modules/knowledge-base/knowledge-base.schemas.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';

// TalkPilot's "bring your own chunks" flow, with the documented request bodies.
let ctx: TestContext;
let w: World;
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const kb = (agentId: string) => `/v1/agents/${agentId}/knowledge-base`;
const get = (path: string, key = w.key) => ctx.http.get(path).set('X-API-Key', key);
const send = (method: 'post' | 'patch' | 'delete', path: string, body?: object, key = w.key) =>
  ctx.http[method](path).set('X-API-Key', key).send(body);

const embedding = (seed: number) => Array.from({ length: 1536 }, (_, i) => Math.sin(seed + i) / 10);

async function document(agentId: string, content: string) {
  const res = await send('post', kb(agentId), { title: 'Preisliste 2026', content }).expect(201);
  expectSchema(res, DocumentSchema);
  return res.body as { id: string; status: string; chunk_count: number };
}

describe('TalkPilot external chunks: POST .../knowledge-base/{documentId}/chunks', () => {
  it('runs the documented flow: placeholder document, poll, delete chunks, post own chunks', async () => {
    const agentId = (await ctx.build.agent(w.orgId, { language: 'de' })).id;
    const doc = await document(agentId, 'Platzhalter');
    await runKnowledgeBaseJobs(ctx);
    expect((await get(`${kb(agentId)}/${doc.id}`).expect(200)).body.status).toBe('ready');
    await send('delete', `${kb(agentId)}/${doc.id}/chunks`).expect(204);

    const res = await send('post', `${kb(agentId)}/${doc.id}/chunks`, {
      chunks: [
        {
          content: 'Die Heizungswartung kostet 129 Euro pauschal.',
          chunk_index: 0,
          embedding: embedding(1),
          token_count: 12,
          metadata: { source: 'preisliste.pdf', page: 1 },
        },
        { content: 'Der Notdienst am Wochenende kostet 89 Euro Anfahrt.', chunk_index: 1, embedding: embedding(2) },
      ],
    }).expect(201);
    expectSchema(res, CreatedChunksSchema);
    expect(res.body.inserted_count).toBe(2);
    expect(res.body.data).toEqual([
      {
        id: expect.any(String),
        document_id: doc.id,
        agent_id: agentId,
        chunk_index: 0,
        position: 0,
        content: 'Die Heizungswartung kostet 129 Euro pauschal.',
        token_count: 12,
        metadata: { source: 'preisliste.pdf', page: 1 },
        created_at: expect.any(String),
      },
      expect.objectContaining({ chunk_index: 1, token_count: null, metadata: null }),
    ]);
    expect(JSON.stringify(res.body)).not.toContain('embedding');

    const listed = await get(`${kb(agentId)}/${doc.id}/chunks`).expect(200);
    expectSchema(listed, paginated(ChunkSchema));
    expect(listed.body.data.map((c: { chunk_index: number }) => c.chunk_index)).toEqual([0, 1]);
    expect(listed.body.data[0]).not.toHaveProperty('embedding');
    const [stored] = await ctx.db('kb_chunks').where({ document_id: doc.id, position: 0 }).select('embedding');
    expect(stored.embedding).toHaveLength(1536);

    const after = await get(`${kb(agentId)}/${doc.id}`).expect(200);
    expectSchema(after, DocumentSchema);
    expect(after.body).toMatchObject({ status: 'ready', chunk_count: 2 });

    const search = await send('post', `${kb(agentId)}/search`, { query: 'Was kostet der Notdienst?' }).expect(200);
    expectSchema(search, SearchResultSchema);
    expect(search.body.data[0]).toMatchObject({ document_id: doc.id, chunk_index: 1 });
  });

  it('accepts a document with empty content, ready at once and never processed by the pipeline', async () => {
    const agentId = (await ctx.build.agent(w.orgId)).id;
    const doc = await document(agentId, '');
    expect(doc).toMatchObject({ status: 'ready', chunk_count: 0 });
    await runKnowledgeBaseJobs(ctx);
    await send('post', `${kb(agentId)}/${doc.id}/chunks`, {
      chunks: [{ content: 'Öffnungszeiten: Montag bis Freitag 8 bis 17 Uhr.', chunk_index: 0 }],
    }).expect(201);
    expect((await get(`${kb(agentId)}/${doc.id}`).expect(200)).body).toMatchObject({ status: 'ready', chunk_count: 1 });
  });

  it('never lets the pipeline overwrite client chunks, not even after a content PATCH', async () => {
    const agentId = (await ctx.build.agent(w.orgId)).id;
    const doc = await document(agentId, 'Platzhalter');
    // The client's chunks arrive while the pipeline job is still queued.
    await send('post', `${kb(agentId)}/${doc.id}/chunks`, {
      chunks: [{ content: 'Eigener Abschnitt', chunk_index: 5 }],
    }).expect(201);
    expectSchema(
      await send('patch', `${kb(agentId)}/${doc.id}`, { content: 'Neuer Text', status: 'completed' }).expect(200),
      DocumentSchema,
    );
    await runKnowledgeBaseJobs(ctx);
    const chunks = await get(`${kb(agentId)}/${doc.id}/chunks`).expect(200);
    expect(chunks.body.data.map((c: { content: string }) => c.content)).toEqual(['Eigener Abschnitt']);
    expect((await get(`${kb(agentId)}/${doc.id}`).expect(200)).body).toMatchObject({
      status: 'ready',
      chunk_count: 1,
      content: 'Neuer Text',
    });
  });

  it.each([
    ['no chunks', { chunks: [] }, ['chunks']],
    ['101 chunks', { chunks: Array.from({ length: 101 }, (_, i) => ({ content: 'x', chunk_index: i })) }, ['chunks']],
    [
      'bad items',
      {
        chunks: [
          { content: '', chunk_index: -1, embedding: [0.1, 0.2], token_count: -3, metadata: 'x' },
          { chunk_index: 1.5 },
        ],
      },
      [
        'chunks[0].chunk_index',
        'chunks[0].content',
        'chunks[0].embedding',
        'chunks[0].metadata',
        'chunks[0].token_count',
        'chunks[1].chunk_index',
        'chunks[1].content',
      ],
    ],
    [
      'a repeated chunk_index',
      {
        chunks: [
          { content: 'a', chunk_index: 0 },
          { content: 'b', chunk_index: 0 },
        ],
      },
      ['chunks[1].chunk_index'],
    ],
  ])('refuses %s with 400 and writes nothing', async (_name, body, fields) => {
    const agentId = (await ctx.build.agent(w.orgId)).id;
    const doc = await document(agentId, '');
    const res = await send('post', `${kb(agentId)}/${doc.id}/chunks`, body).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(fields);
    expect(await ctx.db('kb_chunks').where({ document_id: doc.id })).toEqual([]);
  });

  it('accepts exactly 100 chunks and refuses a chunk_index the document has with 409', async () => {
    const agentId = (await ctx.build.agent(w.orgId)).id;
    const doc = await document(agentId, '');
    const chunks = Array.from({ length: 100 }, (_, i) => ({ content: `Teil ${i}`, chunk_index: i }));
    await send('post', `${kb(agentId)}/${doc.id}/chunks`, { chunks }).expect(201);
    const res = await send('post', `${kb(agentId)}/${doc.id}/chunks`, {
      chunks: [
        { content: 'neu', chunk_index: 100 },
        { content: 'doppelt', chunk_index: 3 },
      ],
    }).expect(409);
    expect(res.body.error.details).toEqual([{ field: 'chunks[1].chunk_index', message: 'Already taken' }]);
    expect(await ctx.db('kb_chunks').where({ document_id: doc.id })).toHaveLength(100);
  });

  it('is 404 for a document of another agent, 403 without kb:write and for organization documents', async () => {
    const owner = (await ctx.build.agent(w.orgId)).id;
    const other = (await ctx.build.agent(w.orgId)).id;
    const doc = await document(owner, '');
    const body = { chunks: [{ content: 'x', chunk_index: 0 }] };
    await send('post', `${kb(other)}/${doc.id}/chunks`, body).expect(404);
    const readOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:read'] });
    const denied = await send('post', `${kb(owner)}/${doc.id}/chunks`, body, readOnly.key).expect(403);
    expect(denied.body.error.message).toBe('API key lacks required permission: kb:write');
    const [orgDoc] = await ctx
      .db('kb_documents')
      .insert({ organization_id: w.orgId, agent_id: null, scope: 'organization', title: 'Firma', content: 'x' })
      .returning('id');
    await ctx.db('kb_document_grants').insert({ document_id: orgDoc.id, agent_id: owner, organization_id: w.orgId });
    await send('post', `${kb(owner)}/${orgDoc.id}/chunks`, body).expect(403);
    expect(await ctx.db('kb_chunks').whereIn('document_id', [doc.id, orgDoc.id])).toEqual([]);
  });
});

describe('TalkPilot knowledge-base list filter', () => {
  it('accepts status=completed as the older name of ready', async () => {
    const agentId = (await ctx.build.agent(w.orgId)).id;
    const ready = await document(agentId, '');
    await document(agentId, 'wartet noch');
    const res = await get(`${kb(agentId)}?status=completed`).expect(200);
    expectSchema(res, paginated(DocumentSchema));
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([ready.id]);
    await get(`${kb(agentId)}?status=done`).expect(400);
  });
});
