import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { expectSchema } from '../support/expect-schema.js';
import {
  DocumentSchema,
  OrganizationDocumentSchema,
  SearchResultSchema,
} from '../../src/modules/knowledge-base/knowledge-base.schemas.js';
import { loadCorpus, runKnowledgeBaseJobs } from '../support/knowledge-base.js';
import { MAX_RANKED_CHUNKS, searchTerms } from '../../src/modules/knowledge-base/text-search.js';
import { KnowledgeBaseIndexRepository } from '../../src/modules/knowledge-base/kb-index.repository.js';
import { createDb } from '../../src/db/knex.js';

type Hit = {
  chunk_id: string;
  document_id: string;
  document_title: string;
  scope: string;
  position: number;
  content: string;
  score: number;
};

let ctx: TestContext;
let w: World;
let german: string;
let english: string;
let unstemmed: string;
const documentIds = new Map<string, string>();

const search = (agentId: string) => `/v1/agents/${agentId}/knowledge-base/search`;

async function addCorpus(agentId: string, language: 'de' | 'en') {
  for (const doc of loadCorpus(language)) {
    const res = await ctx.http
      .post(`/v1/agents/${agentId}/knowledge-base`)
      .set('X-API-Key', w.key)
      .send({ title: doc.title, content: doc.content })
      .expect(201);
    expectSchema(res, DocumentSchema);
    documentIds.set(`${agentId}:${doc.title}`, res.body.id);
  }
}

async function ask(agentId: string, query: string, topK?: number, key = w.key): Promise<Hit[]> {
  const res = await ctx.http
    .post(search(agentId))
    .set('X-API-Key', key)
    .send({ query, ...(topK ? { top_k: topK } : {}) })
    .expect(200);
  expectSchema(res, SearchResultSchema);
  return res.body.data;
}

/** A document of `contents` as client-provided chunks, uploaded in batches of 100. */
async function documentWithChunks(agentId: string, key: string, title: string, contents: string[]) {
  const doc = await ctx.http
    .post(`/v1/agents/${agentId}/knowledge-base`)
    .set('X-API-Key', key)
    .send({ title, content: '' })
    .expect(201);
  for (let start = 0; start < contents.length; start += 100) {
    await ctx.http
      .post(`/v1/agents/${agentId}/knowledge-base/${doc.body.id}/chunks`)
      .set('X-API-Key', key)
      .send({ chunks: contents.slice(start, start + 100).map((content, i) => ({ content, chunk_index: start + i })) })
      .expect(201);
  }
}

const titles = (hits: Hit[]) => hits.map((h) => h.document_title);

/** German and English agents with the shipped corpus, plus an agent without a language (no stemming). */
beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  german = w.agentId;
  await ctx.db('agents').where({ id: german }).update({ language: 'de' });
  await ctx.syncCaches();
  english = (await ctx.build.agent(w.orgId, { language: 'en' })).id;
  unstemmed = (await ctx.build.agent(w.orgId)).id;
  await addCorpus(german, 'de');
  await addCorpus(english, 'en');
  await addCorpus(unstemmed, 'de');
  await addCorpus(unstemmed, 'en');
  await runKnowledgeBaseJobs(ctx);
});
afterAll(() => ctx.close());

describe('the shipped corpus after processing', () => {
  it('is ready, indexed in each agent language, with documents split into several chunks', async () => {
    const documents = await ctx.db('kb_documents').where({ organization_id: w.orgId }).select('status', 'chunk_count');
    expect(documents).toHaveLength(12);
    expect(documents.every((d) => d.status === 'ready' && d.chunk_count >= 1)).toBe(true);
    expect(documents.some((d) => d.chunk_count > 1)).toBe(true);
    const configs = await ctx
      .db('kb_chunks as c')
      .join('kb_documents as d', 'd.id', 'c.document_id')
      .distinct('d.agent_id', 'c.ts_config');
    expect(new Map(configs.map((r) => [r.agent_id, r.ts_config]))).toEqual(
      new Map([
        [german, 'german'],
        [english, 'english'],
        [unstemmed, 'simple'],
      ]),
    );
  });
});

describe('POST /v1/agents/{agentId}/knowledge-base/search', () => {
  it('answers a German question with the chunk about paying invoices first', async () => {
    const hits = await ask(german, 'Wie kann ich meine Rechnungen bezahlen?');
    expect(hits[0]).toMatchObject({
      document_id: documentIds.get(`${german}:Rechnungen und Zahlung`),
      document_title: 'Rechnungen und Zahlung',
      scope: 'agent',
      position: 0,
    });
    expect(hits[0]!.content).toContain('Sie können Rechnungen per Überweisung');
    expect(hits[0]!.score).toBeGreaterThan(0);
    expect(hits[0]!.score).toBeLessThan(1);
  });

  it('ranks by relevance: best score first, and the matching paragraph of a longer document before its others', async () => {
    const hits = await ask(german, 'Notdienst am Wochenende');
    expect(hits[0]).toMatchObject({ document_title: 'Heizungswartung und Notdienst' });
    expect(hits[0]!.content).toContain('rund um die Uhr, auch an Wochenenden');
    const all = await ask(german, 'Heizung Termin Rechnung', 50);
    const scores = all.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(titles(all))).toEqual(
      new Set(['Heizungswartung und Notdienst', 'Öffnungszeiten und Anfahrt', 'Rechnungen und Zahlung']),
    );
  });

  it('finds German words in other inflections through stemming, which an agent without a language does not', async () => {
    // The corpus says "Mahnung", "Heizung" and "warten"; the questions use other forms.
    expect(titles(await ask(german, 'Mahnungen'))).toEqual(['Rechnungen und Zahlung']);
    expect(titles(await ask(german, 'Heizungen warten'))[0]).toBe('Heizungswartung und Notdienst');
    expect(await ask(unstemmed, 'Mahnungen')).toEqual([]);
  });

  it('answers English questions with the right document first', async () => {
    expect(titles(await ask(english, 'How do I return a damaged item?'))[0]).toBe('Returns and refunds');
    expect(titles(await ask(english, 'When will my parcel be shipped?'))[0]).toBe('Shipping and delivery');
    expect(titles(await ask(english, 'customs duties outside the EU'))[0]).toBe('Shipping and delivery');
    expect(titles(await ask(english, 'How long does a repair take?'))[0]).toBe('Warranty and repairs');
  });

  it('finds English words in other inflections through stemming, which an agent without a language does not', async () => {
    // The corpus says "repair", "repairs" and "refunds"; never "repairing" or "refunding".
    expect(titles(await ask(english, 'repairing'))).toEqual(['Warranty and repairs']);
    expect(titles(await ask(english, 'refunding'))[0]).toBe('Returns and refunds');
    expect(await ask(unstemmed, 'repairing')).toEqual([]);
  });

  it('returns nothing for a question made only of stop words', async () => {
    expect(await ask(english, 'what is the and of it')).toEqual([]);
  });

  it('returns at most top_k chunks, 5 by default', async () => {
    expect(await ask(unstemmed, 'und die der Sie the and of', 2)).toHaveLength(2);
    expect(await ask(unstemmed, 'Sie die der und wir von the and to of')).toHaveLength(5);
  });

  it('searches only ready documents', async () => {
    const res = await ctx.http
      .post(`/v1/agents/${english}/knowledge-base`)
      .set('X-API-Key', w.key)
      .send({ title: 'Loyalty programme', content: 'Every purchase earns loyalty points.' })
      .expect(201);
    expect(await ask(english, 'loyalty')).toEqual([]);
    await runKnowledgeBaseJobs(ctx);
    expect((await ask(english, 'loyalty')).map((h) => h.document_id)).toEqual([res.body.id]);
  });

  it("searches the agent's own documents and the granted organization documents, never other agents' or ungranted ones", async () => {
    const granted = await ctx.http
      .post(`/v1/organization/${w.orgId}/knowledge-base`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ title: 'Company cars', content: 'Our service vans are electric.', language: 'en', agent_ids: [german] })
      .expect(201);
    expectSchema(granted, OrganizationDocumentSchema);
    await ctx.http
      .post(`/v1/organization/${w.orgId}/knowledge-base`)
      .set('Authorization', `Bearer ${w.token}`)
      .send({ title: 'Secret', content: 'Electric vans secret plan.', language: 'en', agent_ids: [] })
      .expect(201);
    await runKnowledgeBaseJobs(ctx);
    // An English organization document is stemmed in English even for the German agent.
    const hits = await ask(german, 'electrical van');
    expect(hits.map((h) => [h.document_id, h.scope])).toEqual([[granted.body.id, 'organization']]);
    // The English agent's documents are not the German agent's.
    expect(await ask(german, 'parcel tracking')).toEqual([]);
  });

  it('lists every problem of an invalid body', async () => {
    const res = await ctx.http.post(search(german)).set('X-API-Key', w.key).send({ top_k: 0 }).expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['query', 'top_k']);
    for (const body of [
      { query: '?! ...' },
      { query: 'x'.repeat(1001) },
      { query: 'a', top_k: 51 },
      { query: 'a', top_k: 2.5 },
    ]) {
      await ctx.http.post(search(german)).set('X-API-Key', w.key).send(body).expect(400);
    }
  });

  it('is 403 without kb:read, 403 AGENT_NOT_ACCESSIBLE out of scope, 404 for another organization and 400 for a bad agentId', async () => {
    const writeOnly = await ctx.build.apiKey(w.orgId, w.userId, { permissions: ['kb:write'] });
    const a = await ctx.http
      .post(search(german))
      .set('X-API-Key', writeOnly.key)
      .send({ query: 'Rechnung' })
      .expect(403);
    expect(a.body.error.message).toBe('API key lacks required permission: kb:read');
    const scoped = await ctx.build.apiKey(w.orgId, w.userId, { allowedAgentIds: [english] });
    const b = await ctx.http.post(search(german)).set('X-API-Key', scoped.key).send({ query: 'Rechnung' }).expect(403);
    expect(b.body.error.code).toBe('AGENT_NOT_ACCESSIBLE');
    const other = await ctx.build.world();
    await ctx.http.post(search(german)).set('X-API-Key', other.key).send({ query: 'Rechnung' }).expect(404);
    const c = await ctx.http.post(search('x')).set('X-API-Key', w.key).send({ query: 'Rechnung' }).expect(400);
    expect(c.body.error.details).toEqual([{ field: 'agentId', message: 'Must be a UUID' }]);
  });
});

describe('search when more chunks match than it ranks (MAX_RANKED_CHUNKS)', () => {
  let crowded: string;
  const both = 'Alpha und Beta zusammen';
  const rare = 'Gamma, gamma: selten';

  /** 1,202 chunks of an agent without a language: 600 say "Alpha Eintrag", 600 "Beta Eintrag", two come last. */
  beforeAll(async () => {
    crowded = (await ctx.build.agent(w.orgId)).id;
    await documentWithChunks(crowded, w.key, 'Crowded', [
      ...Array.from({ length: 600 }, (_, i) => `Alpha Eintrag ${i}`),
      ...Array.from({ length: 600 }, (_, i) => `Beta Eintrag ${i}`),
      both,
      rare,
    ]);
    expect(MAX_RANKED_CHUNKS).toBeLessThan(1200);
  });

  it('still answers top_k chunks that match, best score first, the same for the same question', async () => {
    const hits = await ask(crowded, 'Eintrag', 50);
    expect(hits).toHaveLength(50);
    expect(hits.every((h) => h.content.includes('Eintrag'))).toBe(true);
    const scores = hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(await ask(crowded, 'Eintrag', 50)).toEqual(hits);
  });

  it('ranks a chunk with every word of the question even when each word alone is common', async () => {
    const hits = await ask(crowded, 'Alpha Beta');
    expect(hits[0]!.content).toBe(both);
    expect(hits).toHaveLength(5);
  });

  it('answers chunks with every word when those alone fill their share (each word is then common)', async () => {
    // 600 chunks say both words, more than the all-words share: the words' own probes are skipped.
    const hits = await ask(crowded, 'Eintrag Alpha', 50);
    expect(hits).toHaveLength(50);
    expect(hits.every((h) => h.content.startsWith('Alpha Eintrag'))).toBe(true);
    expect(await ask(crowded, 'Eintrag Alpha', 50)).toEqual(hits);
  });

  it('ranks a chunk with a rare word of the question even when another word is in hundreds of chunks', async () => {
    const hits = await ask(crowded, 'Beta Gamma');
    expect(hits[0]!.content).toBe(rare);
    expect(hits.slice(1).every((h) => h.content.includes('Beta'))).toBe(true);
  });
});

describe('search when a word is common only among the first chunks it tries', () => {
  it('still finds the later chunk with that word: the in-order read does not fill its share, the index is read', async () => {
    // An organization of its own: the chunks search tries first are this document's first ones.
    const own = await ctx.build.world();
    // 16 chunks with "Delta" (the whole sample), 183 without, then the best one.
    await documentWithChunks(own.agentId, own.key, 'Delta', [
      ...Array.from({ length: 16 }, (_, i) => `Delta Hinweis ${i}`),
      ...Array.from({ length: 183 }, (_, i) => `Füllung ${i}`),
      'Delta Delta Delta Ziel',
    ]);
    // 32 words: each probe brings at most 30 chunks and reads at most 120 in order, all before "Ziel".
    const filler = Array.from({ length: 31 }, (_, i) => `wort${i}`);
    const hits = await ask(own.agentId, ['Delta', ...filler].join(' '), 20, own.key);
    expect(hits[0]!.content).toBe('Delta Delta Delta Ziel');
    expect(hits).toHaveLength(17);
  });
});

describe('search with DATABASE_PREPARED_STATEMENTS=false', () => {
  it('runs the same statement unnamed, with the same answer', async () => {
    const question = 'Wie kann ich meine Rechnungen bezahlen?';
    const named = await ask(german, question);
    const db = createDb(ctx.config.DATABASE_URL!, 1, undefined, { preparedStatements: false });
    try {
      const index = new KnowledgeBaseIndexRepository(db);
      const hits = await index.search({ id: german, organization_id: w.orgId }, searchTerms(question), 5);
      expect(hits.map((h) => h.chunk_id)).toEqual(named.map((h) => h.chunk_id));
      const { rows } = await db.raw('SELECT name FROM pg_prepared_statements');
      expect(rows).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

describe('the search route in the API description', () => {
  it('is in the OpenAPI document, and another method on it is 405', async () => {
    const doc = await ctx.http.get('/v1/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths['/v1/agents/{agentId}/knowledge-base/search'])).toEqual(['post']);
    const res = await ctx.http.get(search(german)).set('X-API-Key', w.key).expect(405);
    expect(res.headers.allow).toBe('POST');
  });
});
