import { inflateRawSync } from 'node:zlib';
import type { KB_FILE_MEDIA_TYPES } from './knowledge-base.schemas.js';

/**
 * Text from uploaded files and fetched pages, keeping the structure chunking needs: headings as
 * `#` lines, list items as `- ` lines, paragraphs separated by a blank line.
 *
 * The HTML, DOCX and PDF libraries (linkedom, Readability, mammoth, unpdf) are imported where they
 * are used, on the first extraction: loaded at start they hold memory in every process, and most
 * never extract anything (the `memory` bench scenario shows the RSS at start and idle).
 */

export const FAILURE_REASONS = ['encrypted', 'no_text', 'too_large_unpacked', 'too_many_pages', 'corrupt'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number] | 'unreachable';

export const FAILURE_MESSAGES: Record<FailureReason, string> = {
  encrypted: 'The file is password-protected; upload it without a password',
  no_text: 'The file has no text to index (a scanned document holds only images)',
  too_large_unpacked: 'The file unpacks to more than the allowed size',
  too_many_pages: 'The PDF has more pages than allowed',
  corrupt: 'The file is damaged or not what its type says',
  unreachable: 'The page could not be fetched',
};

export class ExtractionError extends Error {
  constructor(
    readonly reason: FailureReason,
    message = FAILURE_MESSAGES[reason],
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/**
 * What text is extracted from: exactly the media types a knowledge-base file is detected as. Only
 * the type is imported: the extraction thread loads this module for every file and web page, and
 * the schemas would bring zod and the OpenAPI registry into each thread.
 */
export type ExtractableType = (typeof KB_FILE_MEDIA_TYPES)[number];

export type ExtractLimits = {
  /** KB_MAX_PDF_PAGES */
  maxPdfPages: number;
  /** What a DOCX may unpack to, all entries together. */
  maxUnpackedBytes: number;
  /** Characters of text kept; more is cut off. */
  maxTextChars: number;
};

export const MAX_UNPACKED_BYTES = 50 * 1024 * 1024;
export const MAX_TEXT_CHARS = 2_000_000;
/**
 * Characters of markup read from one HTML file or page; the rest is not parsed. A DOM costs the
 * heap about fifteen times its markup, and Readability as much again: a 20 MB upload (the file
 * limit) parsed whole takes more than the production heap (160 MB) by itself. 2 MB of markup costs
 * under 60 MB, so a file or page at the limit fits in the heap of the thread it is read in
 * (EXTRACT_THREAD_HEAP_MB, isolated-extract.ts). Its text is at most MAX_TEXT_CHARS, which is kept
 * anyway.
 */
export const MAX_HTML_CHARS = 2 * 1024 * 1024;

export async function extractText(type: ExtractableType, data: Buffer, limits: ExtractLimits): Promise<string> {
  let text: string;
  switch (type) {
    case 'application/pdf':
      text = await pdfText(data, limits.maxPdfPages, limits.maxTextChars);
      break;
    case 'application/vnd.openxmlformats-officedocument.wordprocessingml.document':
      text = await docxText(data, limits.maxUnpackedBytes);
      break;
    case 'text/html':
      text = (await mainText(decodeUtf8(data, MAX_HTML_CHARS))).text;
      break;
    default:
      text = decodeUtf8(data, limits.maxTextChars).replace(/\r\n?/g, '\n');
  }
  text = text.slice(0, limits.maxTextChars);
  if (!/[\p{L}\p{N}]/u.test(text)) throw new ExtractionError('no_text');
  return text;
}

/**
 * The first `maxChars` characters of UTF-8 text, decoding no more bytes than they can take (three
 * per UTF-16 unit): the rest of a large file never becomes a string. `stream` lets a cut fall in
 * the middle of a character without counting as invalid.
 */
function decodeUtf8(data: Buffer, maxChars: number): string {
  try {
    return new TextDecoder('utf-8', { fatal: true })
      .decode(data.subarray(0, maxChars * 3), { stream: data.length > maxChars * 3 })
      .replace(/^\uFEFF/, '')
      .slice(0, maxChars);
  } catch {
    throw new ExtractionError('corrupt', 'The text is not valid UTF-8');
  }
}

type TextItem = { str: string; hasEOL: boolean; transform: number[]; height: number };

/** Page by page; lines from the text items' rows, a blank line where the gap between rows is wide. */
async function pdfText(data: Buffer, maxPages: number, maxChars: number): Promise<string> {
  const { getDocumentProxy } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(data), {
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      stopAtErrors: true,
    });
  } catch (error) {
    if ((error as Error).name === 'PasswordException') throw new ExtractionError('encrypted');
    throw new ExtractionError('corrupt');
  }
  try {
    if (pdf.numPages > maxPages)
      throw new ExtractionError('too_many_pages', `The PDF has ${pdf.numPages} pages; at most ${maxPages} are allowed`);
    const pages: string[] = [];
    let length = 0;
    for (let n = 1; n <= pdf.numPages && length < maxChars; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      const text = pageText(content.items as TextItem[]);
      page.cleanup();
      pages.push(text);
      length += text.length;
    }
    return pages.join('\n\n');
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt');
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

function pageText(items: TextItem[]): string {
  let out = '';
  let line = '';
  let lastY: number | undefined;
  let lineHeight = 12;
  const endLine = () => {
    if (line.trim() !== '') out += (out === '' ? '' : '\n') + line.trim();
    line = '';
  };
  for (const item of items) {
    if (typeof item.str !== 'string') continue;
    const y = item.transform?.[5];
    if (lastY !== undefined && y !== undefined && Math.abs(lastY - y) > 1) {
      const gap = Math.abs(lastY - y);
      endLine();
      if (gap > lineHeight * 1.8) out += '\n';
    }
    if (item.height > 0) lineHeight = item.height;
    line += item.str;
    if (item.hasEOL) {
      endLine();
    }
    if (y !== undefined) lastY = y;
  }
  endLine();
  return out;
}

/**
 * Checks what a ZIP archive unpacks to by inflating every entry with a running limit, never
 * trusting the sizes its headers claim (a lying header is the point of a zip bomb). Entries are
 * found through the central directory; the local header gives where each entry's data starts.
 */
export function checkUnpackedSize(zip: Buffer, maxBytes: number): void {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0 || end + 22 > zip.length) throw new ExtractionError('corrupt');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50) throw new ExtractionError('corrupt');
    const method = zip.readUInt16LE(at + 10);
    const packed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    at += 46 + nameLength + extraLength + commentLength;
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== 0x04034b50) throw new ExtractionError('corrupt');
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    if (start + packed > zip.length) throw new ExtractionError('corrupt');
    const data = zip.subarray(start, start + packed);
    const remaining = maxBytes - total;
    if (method === 0) total += data.length;
    else if (method === 8) {
      try {
        total += inflateRawSync(data, { maxOutputLength: Math.max(remaining, 1) }).length;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError)
          throw new ExtractionError('too_large_unpacked');
        throw new ExtractionError('corrupt');
      }
    } else throw new ExtractionError('corrupt', 'The file uses an unsupported compression method');
    if (total > maxBytes) throw new ExtractionError('too_large_unpacked');
  }
}

async function docxText(data: Buffer, maxUnpackedBytes: number): Promise<string> {
  checkUnpackedSize(data, maxUnpackedBytes);
  const [{ default: mammoth }, { parseHTML }] = await Promise.all([import('mammoth'), import('linkedom')]);
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: data })).value;
  } catch {
    throw new ExtractionError('corrupt');
  }
  return structuredText(parseHTML(`<!doctype html><html><body>${html}</body></html>`).document.body);
}

type Node = { nodeType: number; nodeName: string; textContent: string | null; childNodes: ArrayLike<Node> };

const BLOCKS = new Set([
  'P',
  'DIV',
  'SECTION',
  'ARTICLE',
  'MAIN',
  'BLOCKQUOTE',
  'PRE',
  'TABLE',
  'UL',
  'OL',
  'DL',
  'DT',
  'DD',
  'FIGURE',
  'HEADER',
  'FOOTER',
  'ADDRESS',
]);
const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'IFRAME', 'HEAD']);

/** Headings as `#` lines, list items as `- ` lines, table rows as cells joined by ` | `, blocks as paragraphs. */
export function structuredText(root: Node): string {
  const blocks: string[] = [];
  let inline = '';
  const flush = () => {
    const text = inline
      .replace(/[ \t\f\v\u00a0]+/g, ' ')
      .replace(/ *\n */g, '\n')
      .trim();
    if (text !== '') blocks.push(text);
    inline = '';
  };
  const inlineText = (node: Node): string => {
    if (node.nodeType === 3) return node.textContent ?? '';
    if (SKIP.has(node.nodeName)) return '';
    if (node.nodeName === 'BR') return '\n';
    return Array.from(node.childNodes)
      .map(inlineText)
      .join(['TD', 'TH'].includes(node.nodeName) ? ' ' : '');
  };
  const walk = (node: Node) => {
    if (node.nodeType === 3) {
      inline += node.textContent ?? '';
      return;
    }
    if (node.nodeType !== 1 || SKIP.has(node.nodeName)) return;
    const name = node.nodeName;
    const heading = /^H([1-6])$/.exec(name);
    if (heading) {
      flush();
      const text = inlineText(node).replace(/\s+/g, ' ').trim();
      if (text !== '') blocks.push(`${'#'.repeat(Number(heading[1]))} ${text}`);
      return;
    }
    if (name === 'LI') {
      flush();
      const text = inlineText(node).replace(/\s+/g, ' ').trim();
      if (text !== '') {
        // Consecutive items stay one block: a list is one paragraph for chunking.
        const last = blocks.length - 1;
        if (last >= 0 && blocks[last]!.startsWith('- ') && !blocks[last]!.includes('\n\n'))
          blocks[last] += `\n- ${text}`;
        else blocks.push(`- ${text}`);
      }
      return;
    }
    if (name === 'TR') {
      flush();
      const cells = Array.from(node.childNodes)
        .filter((c) => c.nodeName === 'TD' || c.nodeName === 'TH')
        .map((c) => inlineText(c).replace(/\s+/g, ' ').trim())
        .filter((c) => c !== '');
      if (cells.length > 0) blocks.push(cells.join(' | '));
      return;
    }
    if (name === 'BR') {
      inline += '\n';
      return;
    }
    const block = BLOCKS.has(name);
    if (block) flush();
    for (const child of Array.from(node.childNodes)) walk(child);
    if (block) flush();
    if (name === 'UL' || name === 'OL') blocks.push('');
  };
  walk(root);
  flush();
  return blocks
    .filter((b, i) => b !== '' || (i > 0 && blocks[i - 1] !== ''))
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Markup up to which Readability looks for the main text. It walks the whole DOM several times, and
 * its time and heap count against the extraction thread's limits: beyond this, a page (more likely
 * a long document saved as HTML than an article with boilerplate) is read as its body without
 * navigation, header and footer, in a fraction of the time and heap.
 */
const READABILITY_MAX_CHARS = 512 * 1024;

/**
 * The page's main text (Readability: navigation and boilerplate removed) and its title, from its
 * first MAX_HTML_CHARS characters.
 */
export async function mainText(page: string): Promise<{ title: string | null; text: string }> {
  const [{ parseHTML }, { Readability }] = await Promise.all([import('linkedom'), import('@mozilla/readability')]);
  const html = page.slice(0, MAX_HTML_CHARS);
  const { document } = parseHTML(html);
  const title = document.querySelector('title')?.textContent?.trim() || null;
  let root: Node | null = null;
  const readable = html.length <= READABILITY_MAX_CHARS;
  if (readable) {
    try {
      const article = new Readability(document as object as Document, { charThreshold: 100 }).parse();
      if (article?.content)
        root = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body;
    } catch {
      root = null;
    }
  }
  if (!root) {
    // Too little text for Readability, or too much markup: the body without its navigation,
    // header and footer (Readability changed the first DOM, so it is parsed again).
    const fallback = readable ? parseHTML(html).document : document;
    for (const el of fallback.querySelectorAll('nav, header, footer, aside, script, style, form')) el.remove();
    root = fallback.body ?? fallback.documentElement;
  }
  return { title, text: root ? structuredText(root) : '' };
}

/** What a fetched web page is read as: its title, its main text and its same-origin links. */
export type WebPage = { title: string | null; text: string; links: string[] };

/**
 * A fetched HTML page (isolated-extract.ts runs this in the extraction thread): its links
 * resolved against `base` (the address it was fetched from, after redirects) and kept when they
 * are on `origin` (the crawl's), then its main text and title.
 */
export async function webPage(html: string, base: URL, origin: string): Promise<WebPage> {
  const links = await sameOriginLinks(html, base, origin);
  const { title, text } = await mainText(html);
  return { title, text, links };
}

/** The links to `origin` in the page's first MAX_HTML_CHARS characters (the part mainText reads), at most 1000. */
async function sameOriginLinks(html: string, base: URL, origin: string): Promise<string[]> {
  const { parseHTML } = await import('linkedom');
  const { document } = parseHTML(html.slice(0, MAX_HTML_CHARS));
  const found = new Set<string>();
  for (const anchor of document.querySelectorAll('a[href]')) {
    try {
      const url = new URL(anchor.getAttribute('href') ?? '', base);
      if (url.origin !== origin) continue;
      url.hash = '';
      found.add(url.toString());
    } catch {
      // Not an address.
    }
    if (found.size >= 1000) break;
  }
  return [...found];
}

/**
 * Chunks that keep a section's heading: the text is cut into sections at heading lines, each
 * section is split on its own, and each of its chunks begins with the heading.
 */
export function splitSections(
  text: string,
  maxChars: number,
  split: (text: string, max: number) => string[],
): string[] {
  const chunks: string[] = [];
  let heading = '';
  let body: string[] = [];
  const flush = () => {
    const joined = body.join('\n\n').trim();
    if (joined === '') {
      if (heading !== '' && body.length === 0) body = [];
      return;
    }
    const room = Math.max(maxChars - heading.length - 2, Math.floor(maxChars / 2));
    for (const chunk of split(joined, room)) chunks.push(heading === '' ? chunk : `${heading}\n\n${chunk}`);
    body = [];
  };
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    const line = paragraph.trim();
    if (/^#{1,6} \S/.test(line) && !line.includes('\n')) {
      flush();
      heading = line.replace(/^#+ /, '');
      continue;
    }
    body.push(paragraph);
  }
  flush();
  return chunks;
}
