import { describe, expect, it } from 'vitest';
import {
  ExtractionError,
  extractText,
  MAX_HTML_CHARS,
  type ExtractLimits,
} from '../../src/modules/knowledge-base/extract.js';
import { extractIsolated } from '../../src/modules/knowledge-base/isolated-extract.js';
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
