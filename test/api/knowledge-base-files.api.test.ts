import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';
import { expectSchema } from '../support/expect-schema.js';
import { DocumentSchema, OrganizationDocumentSchema } from '../../src/modules/knowledge-base/knowledge-base.schemas.js';
import { makeDocx, makeExecutable, makePdf, makeZipBombDocx } from '../support/kb-fixtures.js';

let ctx: TestContext;
let w: World;
const MAX_FILE_BYTES = 3 * 1024 * 1024;
beforeAll(async () => {
  ctx = await createTestContext({ config: { KB_MAX_FILE_BYTES: String(MAX_FILE_BYTES), KB_MAX_PDF_PAGES: '500' } });
  w = await ctx.build.world();
});
afterAll(() => ctx.close());

const files = (agentId: string) => `/v1/agents/${agentId}/knowledge-base/files`;
type Doc = { id: string; status: string; failure_reason: string | null; [field: string]: unknown };

function upload(data: Buffer, filename: string, world: World = w, title?: string) {
  const req = ctx.http.post(files(world.agentId)).set('X-API-Key', world.key).attach('file', data, filename);
  return title === undefined ? req : req.field('title', title);
}

async function processed(id: string): Promise<Doc> {
  await runKnowledgeBaseJobs(ctx);
  const res = await ctx.http.get(`/v1/agents/${w.agentId}/knowledge-base/${id}`).set('X-API-Key', w.key).expect(200);
  expectSchema(res, DocumentSchema);
  return res.body as Doc;
}

async function chunksOf(id: string): Promise<string[]> {
  const rows: { content: string }[] = await ctx.db('kb_chunks').where({ document_id: id }).orderBy('position');
  return rows.map((r) => r.content);
}

describe('POST /v1/agents/{agentId}/knowledge-base/files', () => {
  it('takes a PDF: 202 pending with the file described, then ready with its text', async () => {
    const pdf = makePdf({ pages: [['Preisliste 2026', 'Herrenhaarschnitt 28 Euro', 'Damenhaarschnitt 45 Euro']] });
    const res = await upload(pdf, 'preise.pdf', w, 'Preisliste').expect(202);
    expectSchema(res, DocumentSchema);
    expect(res.body).toMatchObject({
      source_type: 'file',
      status: 'pending',
      title: 'Preisliste',
      content: null,
      failure_reason: null,
      source: { filename: 'preise.pdf', media_type: 'application/pdf', bytes: pdf.length },
    });
    expect(res.body.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    const parts = await ctx.db('kb_file_parts').where({ document_id: res.body.id }).count({ n: '*' }).first();
    expect(Number(parts?.n)).toBe(1);

    const done = await processed(res.body.id);
    expect(done).toMatchObject({ status: 'ready', failure_reason: null });
    expect((await chunksOf(res.body.id)).join('\n')).toContain('Herrenhaarschnitt 28 Euro');
    // The bytes are kept only until extraction.
    expect(await ctx.db('kb_file_parts').where({ document_id: res.body.id }).first()).toBeUndefined();
  });

  it('keeps the headings and lists of a DOCX as structure: each chunk starts with its heading', async () => {
    const docx = makeDocx([
      { heading: 'Öffnungszeiten' },
      { paragraph: 'Wir sind für Sie da:' },
      { bullet: 'Montag bis Freitag 8 bis 18 Uhr' },
      { bullet: 'Samstag 9 bis 13 Uhr' },
      { heading: 'Anfahrt' },
      { paragraph: 'Parkplätze im Hof.' },
    ]);
    const res = await upload(docx, 'zeiten.docx').expect(202);
    expect(res.body.title).toBe('zeiten.docx');
    expect(res.body.source.media_type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect((await processed(res.body.id)).status).toBe('ready');
    const chunks = await chunksOf(res.body.id);
    expect(chunks[0]).toBe(
      'Öffnungszeiten\n\nWir sind für Sie da:\n\n- Montag bis Freitag 8 bis 18 Uhr\n- Samstag 9 bis 13 Uhr',
    );
    expect(chunks[1]).toBe('Anfahrt\n\nParkplätze im Hof.');
  });

  it.each([
    [
      '<!doctype html><html><head><title>FAQ</title></head><body><h2>Parken</h2><p>Im Hof.</p></body></html>',
      'text/html',
    ],
    ['# Preise\n\n- Schnitt 20 Euro\n', 'text/markdown'],
    ['Wir haben montags geschlossen.', 'text/plain'],
  ])('detects text formats from the content whatever the name says (%#)', async (text, mediaType) => {
    const res = await upload(Buffer.from(text), 'misnamed.pdf').expect(202);
    expect(res.body.source.media_type).toBe(mediaType);
    expect((await processed(res.body.id)).status).toBe('ready');
  });

  it('returns the existing document (200) for the same file again', async () => {
    const data = Buffer.from('Die Werkstatt ist im Januar geschlossen.');
    const first = await upload(data, 'a.txt').expect(202);
    const again = await upload(data, 'b.txt').expect(200);
    expectSchema(again, DocumentSchema);
    expect(again.body.id).toBe(first.body.id);
    // Another agent's knowledge base is another place: a document of its own.
    const other = await ctx.build.world();
    const elsewhere = await upload(data, 'a.txt', other).expect(202);
    expect(elsewhere.body.id).not.toBe(first.body.id);
  });

  it('refuses an executable named .pdf with 415 naming what it is', async () => {
    const res = await upload(makeExecutable(), 'rechnung.pdf').expect(415);
    expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(res.body.error.message).toContain('application/x-msdownload');
  });

  it('refuses other binary content with 415', async () => {
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64)]);
    const res = await upload(png, 'bild.txt').expect(415);
    expect(res.body.error.message).toContain('image/png');
  });

  it('refuses a file over KB_MAX_FILE_BYTES with 413 while it streams', async () => {
    const res = await upload(Buffer.alloc(MAX_FILE_BYTES * 4, 'a'), 'big.txt').expect(413);
    expect(res.body.error.message).toContain(`${MAX_FILE_BYTES} bytes`);
    expect(await ctx.db('kb_documents').where({ title: 'big.txt' }).first()).toBeUndefined();
  });

  it('answers 400 without a file, for an empty file, and for a JSON body', async () => {
    const noFile = await ctx.http.post(files(w.agentId)).set('X-API-Key', w.key).field('title', 'x').expect(400);
    expect(noFile.body.error.details).toEqual([{ field: 'file', message: 'Required' }]);
    await upload(Buffer.alloc(0), 'empty.txt').expect(400);
    const json = await ctx.http.post(files(w.agentId)).set('X-API-Key', w.key).send({ file: 'x' }).expect(400);
    expect(json.body.error.message).toContain('multipart/form-data');
  });

  it('checks permission and scope before reading the body: 404 for an unknown agent', async () => {
    await upload(Buffer.from('x'), 'a.txt', { ...w, agentId: '00000000-0000-4000-8000-000000000000' }).expect(404);
  });

  it('405 for another method on /files', async () => {
    await ctx.http.get(files(w.agentId)).set('X-API-Key', w.key).expect(405);
  });
});

describe('hostile files end failed with their reason, and the worker stays up', () => {
  const cases: [string, () => Buffer, string, string][] = [
    [
      'a zip bomb DOCX with honest size headers',
      () => makeZipBombDocx(60 * 1024 * 1024),
      'bomb.docx',
      'too_large_unpacked',
    ],
    [
      'a zip bomb DOCX with lying size headers',
      () => makeZipBombDocx(60 * 1024 * 1024, { lieAboutSize: true }),
      'liar.docx',
      'too_large_unpacked',
    ],
    [
      // Within the unpack limit, but more than the extraction thread's heap once parsed: it ends the
      // thread, not the server.
      'a DOCX of 100,000 paragraphs',
      () => makeDocx(Array.from({ length: 100_000 }, (_, i) => ({ paragraph: `Absatz ${i}: Bremse und Filter.` }))),
      'paragraphs.docx',
      'too_large_unpacked',
    ],
    ['an encrypted PDF', () => makePdf({ pages: [['Geheim']], encrypted: true }), 'secret.pdf', 'encrypted'],
    ['a PDF with 10,000 pages', () => makePdf({ blankPages: 10_000 }), 'pages.pdf', 'too_many_pages'],
    ['a truncated PDF', () => makePdf({ pages: [['Abgeschnitten']] }).subarray(0, 200), 'cut.pdf', 'corrupt'],
    ['a scanned PDF (no text)', () => makePdf({ blankPages: 3 }), 'scan.pdf', 'no_text'],
  ];

  it.each(cases)(
    '%s',
    async (_name, make, filename, reason) => {
      const data = make();
      const res = await upload(data, filename).expect(202);
      const done = await processed(res.body.id);
      expect(done).toMatchObject({ status: 'failed', failure_reason: reason });
      expect(done.error_message).toEqual(expect.any(String));
      expect(await chunksOf(res.body.id)).toEqual([]);
      // Each case builds its hostile file here (a 60 MB zip bomb compresses in about 0.4 s) and is
      // extracted in a thread of its own whose parsers load cold: 1-4 s alone, over the 20 s default in
      // a whole suite on a loaded 2-core machine (the honest bomb, the first case, took 20 s there). An
      // extraction that hangs still fails the case, at 60 s.
    },
    60_000,
  );

  it('a truncated DOCX is refused (415) or fails as corrupt', async () => {
    const docx = makeDocx([{ paragraph: 'Hallo Welt' }]);
    const res = await upload(docx.subarray(0, Math.floor(docx.length * 0.6)), 'cut.docx');
    if (res.status === 415) return;
    expect(res.status).toBe(202);
    expect(await processed(res.body.id)).toMatchObject({ status: 'failed', failure_reason: 'corrupt' });
  });

  it('processes a good file after all of them', async () => {
    const res = await upload(Buffer.from('Nach den bösen Dateien: alles gut.'), 'good.txt').expect(202);
    expect((await processed(res.body.id)).status).toBe('ready');
  });
});

describe('POST /v1/organization/{orgId}/knowledge-base/files', () => {
  it('takes a file as an organization document (202), the same again is 200', async () => {
    const data = makeDocx([{ heading: 'Urlaub' }, { paragraph: 'Betriebsferien im August.' }]);
    const url = `/v1/organization/${w.orgId}/knowledge-base/files`;
    const res = await ctx.http
      .post(url)
      .set('Authorization', `Bearer ${w.token}`)
      .attach('file', data, 'urlaub.docx')
      .expect(202);
    expectSchema(res, OrganizationDocumentSchema);
    expect(res.body).toMatchObject({ scope: 'organization', agent_id: null, source_type: 'file', agent_ids: [] });
    const again = await ctx.http
      .post(url)
      .set('Authorization', `Bearer ${w.token}`)
      .attach('file', data, 'urlaub.docx')
      .expect(200);
    expect(again.body.id).toBe(res.body.id);
    await runKnowledgeBaseJobs(ctx);
    expect((await ctx.db('kb_documents').where({ id: res.body.id }).first()).status).toBe('ready');
  });

  it('refuses an API key (token only)', async () => {
    await ctx.http
      .post(`/v1/organization/${w.orgId}/knowledge-base/files`)
      .set('X-API-Key', w.key)
      .attach('file', Buffer.from('x'), 'a.txt')
      .expect(401);
  });
});
