import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { makePdf } from '../../test/support/kb-fixtures.js';

/**
 * Files and web sources, against the running product: a 50-page PDF uploaded until ready (target
 * <= 10 s), a 30-page crawl of a site served here on 127.0.0.1 until ready (target <= 20 s), and a
 * refresh with nothing changed, which must touch no chunk (the same chunk rows before and after).
 */
export async function kbSources(
  db: Knex,
  base: string,
  headers: Record<string, string>,
  waitReady: (id: string, timeoutMs: number) => Promise<void>,
) {
  const pages = Array.from({ length: 50 }, (_, p) =>
    Array.from(
      { length: 40 },
      (_, l) => `Seite ${p + 1} Zeile ${l + 1}: Leistung ${p * 40 + l} kostet ${(p + l) % 97} Euro.`,
    ),
  );
  const form = new FormData();
  form.append(
    'file',
    new Blob([new Uint8Array(makePdf({ pages }))], { type: 'application/pdf' }),
    'preise-50-seiten.pdf',
  );
  const pdfStarted = performance.now();
  const upload = await fetch(`${base}/files`, {
    method: 'POST',
    headers: { 'X-API-Key': headers['X-API-Key']! },
    body: form,
  });
  if (upload.status !== 202 && upload.status !== 200)
    throw new Error(`upload: ${upload.status} ${await upload.text()}`);
  const pdfId = ((await upload.json()) as { id: string }).id;
  await waitReady(pdfId, 60_000);
  const pdfMs = performance.now() - pdfStarted;

  const site = createServer((req, res) => {
    const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
    const links = [n + 1, n + 2, 0].map((k) => `<a href="/p/${k % 30}">Seite ${k % 30}</a>`).join(' ');
    // The refresh asks with the ETag of the first sync: nothing changed, so 304.
    if (req.headers['if-none-match'] === `"p${n}"`) {
      res.writeHead(304, { etag: `"p${n}"` });
      return void res.end();
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: `"p${n}"` });
    res.end(
      `<!doctype html><html><head><title>Seite ${n}</title></head><body><nav>${links}</nav><main><article><h1>Seite ${n}</h1>` +
        Array.from(
          { length: 12 },
          (_, i) =>
            `<p>Absatz ${i} der Seite ${n}: Wissen über Thema ${n * 12 + i}, ausführlich erklärt in mehreren Sätzen. Noch ein Satz dazu.</p>`,
        ).join('') +
        `</article></main></body></html>`,
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/p/0`;
  try {
    const crawlStarted = performance.now();
    const created = await fetch(`${base}/urls`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: siteUrl, crawl: { max_pages: 30 } }),
    });
    if (created.status !== 202) throw new Error(`web source: ${created.status} ${await created.text()}`);
    const webId = ((await created.json()) as { id: string }).id;
    await waitReady(webId, 120_000);
    const crawlMs = performance.now() - crawlStarted;
    const pagesFetched = Number((await db('kb_pages').where({ document_id: webId }).count({ n: '*' }).first())?.n);
    const before = await db('kb_chunks').where({ document_id: webId }).orderBy('id').pluck('id');
    const synced = await db('kb_documents').where({ id: webId }).first('last_synced_at');
    const refreshStarted = performance.now();
    const sync = await fetch(`${base}/${webId}/sync`, { method: 'POST', headers });
    if (sync.status !== 202) throw new Error(`sync: ${sync.status}`);
    for (;;) {
      const row = await db('kb_documents').where({ id: webId }).first('last_synced_at', 'sync_status');
      if (row.sync_status !== 'pending' && row.sync_status !== 'syncing' && row.last_synced_at > synced.last_synced_at)
        break;
      if (performance.now() - refreshStarted > 120_000) throw new Error('refresh did not end');
      await new Promise((r) => setTimeout(r, 50));
    }
    const refreshMs = performance.now() - refreshStarted;
    const after = await db('kb_chunks').where({ document_id: webId }).orderBy('id').pluck('id');
    const touched = before.length + after.length - 2 * after.filter((id: string) => before.includes(id)).length;
    return {
      pdf_50_pages_ready_ms: Math.round(pdfMs),
      crawl_pages: pagesFetched,
      crawl_ready_ms: Math.round(crawlMs),
      refresh_unchanged_ms: Math.round(refreshMs),
      refresh_unchanged_chunks_touched: touched,
    };
  } finally {
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
  }
}
