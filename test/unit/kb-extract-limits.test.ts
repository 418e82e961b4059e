import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  ExtractionError,
  extractText,
  MAX_HTML_CHARS,
  webPage,
  type ExtractLimits,
} from '../../src/modules/knowledge-base/extract.js';
import { extractIsolated, readPageIsolated } from '../../src/modules/knowledge-base/isolated-extract.js';
import { makeDocx } from '../support/kb-fixtures.js';

const limits: ExtractLimits = { maxPdfPages: 500, maxUnpackedBytes: 50 * 1024 * 1024, maxTextChars: 1000 };

describe('extractText reads no more than its limits need', () => {
  it('reads the first MAX_HTML_CHARS of markup of a larger HTML file', async () => {
    const paragraph = (n: number) => `<p>Absatz ${n} über die Werkstatt.</p>`;
    const parts = ['<html><body><main>'];
    for (let n = 0, size = 0; size < MAX_HTML_CHARS * 1.5; n++) {
      parts.push(paragraph(n));
      size += paragraph(n).length;
    }
    parts.push('<p>Das Ende steht hier.</p></main></body></html>');
    const html = Buffer.from(parts.join(''));
    const text = await extractText('text/html', html, { ...limits, maxTextChars: 10 * MAX_HTML_CHARS });
    expect(text.startsWith('Absatz 0 über die Werkstatt.')).toBe(true);
    expect(text).not.toContain('Das Ende');
    expect(text.length).toBeLessThan(MAX_HTML_CHARS);
  });

  it('cuts a long text file at maxTextChars, even in the middle of a character of several bytes', async () => {
    for (const offset of [0, 1, 2]) {
      const text = await extractText('text/plain', Buffer.from('x'.repeat(offset) + 'ü€'.repeat(5000)), limits);
      expect(text).toHaveLength(limits.maxTextChars);
      expect(text.endsWith('\uFFFD')).toBe(false);
    }
  });

  it('still refuses invalid UTF-8 inside the part it reads', async () => {
    const bad = Buffer.concat([Buffer.from('Hallo '), Buffer.from([0xff, 0xfe]), Buffer.from(' Welt')]);
    await expect(extractText('text/plain', bad, limits)).rejects.toBeInstanceOf(ExtractionError);
  });
});

describe('extractIsolated: a thread with its own heap and time limit', () => {
  const docx = (paragraphs: number) =>
    makeDocx(Array.from({ length: paragraphs }, (_, i) => ({ paragraph: `Absatz ${i}: Bremse und Filter.` })));
  const docxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

  it('answers the text of a file', async () => {
    await expect(extractIsolated(docxType, docx(3), limits)).resolves.toContain('Absatz 2: Bremse und Filter.');
  });

  it('ends a file that needs more than its heap as too_large_unpacked, and the next one still runs', async () => {
    const failed = extractIsolated(docxType, docx(50_000), limits, { heapMb: 16 });
    await expect(failed).rejects.toMatchObject({ name: 'ExtractionError', reason: 'too_large_unpacked' });
    await expect(extractIsolated('text/plain', Buffer.from('Danach: alles gut.'), limits)).resolves.toBe(
      'Danach: alles gut.',
    );
  });

  it('stops an extraction that takes longer than its time limit (corrupt)', async () => {
    await expect(extractIsolated(docxType, docx(20_000), limits, { timeoutMs: 50 })).rejects.toMatchObject({
      reason: 'corrupt',
      message: 'Reading the file took longer than allowed',
    });
  });
});

describe('readPageIsolated: a web page read in the extraction thread', () => {
  const base = new URL('https://werkstatt.example/faq/');
  const small = () =>
    Buffer.from(
      '<!doctype html><html><head><title>Klein</title></head><body><main><p>Ein kleiner Absatz über die ' +
        'Werkstatt, mit genug Text für einen Abschnitt.</p><a href="/faq/a">A</a></main></body></html>',
    );
  /** A link to the site (relative, with a fragment), to another site, or to an address that is not one. */
  const link = (i: number) =>
    `<a href="${[`a/${i % 50}#teil`, 'https://other.example/x', 'http://['][i % 3]}">Filter</a>`;
  /** A page beyond the markup limit, a link in every paragraph. */
  const largePage = () => {
    const parts = ['<!doctype html><html><head><title>Werkstatt</title></head><body><main>'];
    for (let i = 0, size = 0; size < MAX_HTML_CHARS * 1.2; i++) {
      const part =
        i % 20 === 0 ? `<h2>Abschnitt ${i / 20}</h2>` : `<p>Absatz ${i}: Bremse ${i % 97} und ${link(i)}.</p>`;
      parts.push(part);
      size += part.length;
    }
    return Buffer.from(parts.join('') + '</main></body></html>');
  };

  it('answers the title, text and links that reading the page in this thread gives', async () => {
    // An article within Readability's reach, in a site's navigation and footer.
    const paragraphs = Array.from(
      { length: 400 },
      (_, i) => `<p>Absatz ${i}: Die Werkstatt prüft Bremse ${i % 97} und ${link(i)} nach Vorgabe.</p>`,
    );
    const html =
      '<!doctype html><html><head><title>Werkstatt</title></head><body><nav><a href="/">Start</a> Menü</nav>' +
      `<main><article><h1>Werkstatt</h1>${paragraphs.join('')}</article></main><footer>Impressum</footer></body></html>`;
    const here = await webPage(html, base, base.origin);
    expect(here.title).toBe('Werkstatt');
    expect(here.text).toContain('Absatz 399: Die Werkstatt prüft Bremse 11 und Filter nach Vorgabe.');
    expect(here.text).not.toContain('Impressum');
    expect(here.links).toHaveLength(51);
    expect(here.links).toContain('https://werkstatt.example/faq/a/3');
    await expect(readPageIsolated(Buffer.from(html), base, base.origin)).resolves.toEqual(here);
  });

  // This test and the one-thread test below start threads from the TypeScript sources (1-3 s each
  // on a loaded 2-core machine) and parse a page at the markup limit or wait for an idle thread to
  // end: 6 and 11 s beside the memory test, too close to the 20 s default for a whole suite. A hang
  // still fails, at 60 s.
  it(
    'ends a page that needs more than its heap as too_large_unpacked, and the next page still reads',
    { timeout: 60_000 },
    async () => {
      // A small page reads in 12 MB of heap; this one does not in 48 MB.
      await expect(readPageIsolated(largePage(), base, base.origin, { heapMb: 20 })).rejects.toMatchObject({
        name: 'ExtractionError',
        reason: 'too_large_unpacked',
        message: 'The page needs more memory to read than allowed',
      });
      await expect(readPageIsolated(small(), base, base.origin, { heapMb: 20 })).resolves.toMatchObject({
        title: 'Klein',
        links: ['https://werkstatt.example/faq/a'],
      });
    },
  );

  it('stops a page that takes longer than its time limit (corrupt)', async () => {
    await expect(readPageIsolated(largePage(), base, base.origin, { timeoutMs: 50 })).rejects.toMatchObject({
      reason: 'corrupt',
      message: 'Reading the page took longer than allowed',
    });
  });

  it(
    'keeps one thread at a time: pages in a row share one, a file ends it before its own starts, an idle one ends',
    { timeout: 60_000 },
    async () => {
      const started: Worker[] = [];
      const ended = new Set<Worker>();
      const aliveAtStart: number[] = [];
      const onWorker = (worker: Worker) => {
        aliveAtStart.push(started.filter((w) => !ended.has(w)).length);
        started.push(worker);
        worker.once('exit', () => ended.add(worker));
      };
      process.on('worker', onWorker);
      try {
        // A heap of its own: a thread the tests above kept is not reused, and is ended first.
        const page = () => readPageIsolated(small(), base, base.origin, { heapMb: 40 });
        await page();
        await page();
        expect(started).toHaveLength(1);
        expect(ended.size).toBe(0);
        await expect(extractIsolated('text/plain', Buffer.from('Eine Datei.'), limits)).resolves.toBe('Eine Datei.');
        expect(started).toHaveLength(2);
        expect(ended).toEqual(new Set(started));
        await page();
        expect(started).toHaveLength(3);
        await once(started[2]!, 'exit');
        expect(aliveAtStart).toEqual([0, 0, 0]);
      } finally {
        process.off('worker', onWorker);
      }
    },
  );
});
