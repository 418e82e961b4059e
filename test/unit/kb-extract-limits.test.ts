import { describe, expect, it } from 'vitest';
import {
  ExtractionError,
  extractText,
  MAX_HTML_CHARS,
  type ExtractLimits,
} from '../../src/modules/knowledge-base/extract.js';

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
