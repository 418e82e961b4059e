import { readFileSync, rmSync } from 'node:fs';
import http, { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { Config } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/knex.js';
import { KB_PROCESSING_TIMEOUT_SECONDS } from '../../src/jobs/queue-definitions.js';
import { MAX_UNPACKED_BYTES } from '../../src/modules/knowledge-base/extract.js';
import { EXTRACT_THREAD_HEAP_MB } from '../../src/modules/knowledge-base/isolated-extract.js';
import { Builders, type World } from '../support/builders.js';
import { makeDocx, makeExecutable, makePdf, makeZipBombDocx } from '../support/kb-fixtures.js';
import {
  buildDist,
  createServerDatabase,
  isAlive,
  killLeftovers,
  spawnServer,
  waitFor,
  waitUntilListening,
  type ServerProcess,
} from '../support/server-process.js';

/**
 * The knowledge-base worker's memory under hostile input, in the production start (`npm run
 * start:prod`: its 160 MB heap, 8 MB semi-spaces, the malloc threshold) with the production limits
 * (KB_MAX_FILE_BYTES 20 MB, KB_MAX_PAGE_BYTES 5 MB, KB_MAX_PDF_PAGES 500, 50 MB unpacked per
 * DOCX). All at once, as an attacker would send them: zip-bomb DOCX files of 1 GB unpacked with
 * honest and with lying size headers, a DOCX of 100,000 paragraphs, a PDF of 10,000 pages, an
 * encrypted and a truncated PDF, an executable named .pdf, an HTML upload of 50 MB, the largest
 * HTML upload the limit lets through, and web sources with a 50 MB page, a page that never ends, a redirect to the metadata address,
 * a crawl that loops and the largest page the limit lets through. Each ends with its reason, the
 * process never exits, a normal document is processed afterwards, and the peak resident memory
 * (VmHWM) stays under the bound below.
 */

const MB = 1024 * 1024;
const FILE_LIMIT = 20 * MB;
const PAGE_LIMIT = 5 * MB;
/**
 * The bound over the RSS measured once the server is warm (a PDF, a DOCX, an HTML file and a web
 * page processed, so every extractor is loaded and has run, and no extraction thread left). What
 * the worker may hold beyond that, by the limits: the files of the two documents processed at once
 * (KB_PARALLEL_DOCUMENTS), each as its stored parts and as one buffer (2 x KB_MAX_FILE_BYTES; a web
 * page and its text, at most PAGE_LIMIT bytes and MAX_HTML_CHARS characters, are less); one
 * extraction thread at a time, for files and web pages alike, with its heap limit
 * (EXTRACT_THREAD_HEAP_MB), what it needs beside that heap (its young generation, compiled code and
 * allocator: THREAD_OVERHEAD_MB) and the one inflate output of a DOCX check (at most
 * MAX_UNPACKED_BYTES). A bomb inflated without the running limit (1 GB) lands far beyond it; a file
 * parsed on the server's own heap ends the process (its heap is 160 MB), which the test sees too.
 */
const THREAD_OVERHEAD_MB = 64;
const MARGIN_MB = (2 * 2 * FILE_LIMIT + MAX_UNPACKED_BYTES) / MB + EXTRACT_THREAD_HEAP_MB + THREAD_OVERHEAD_MB;

let buildDir: string;
let db: Db;
let drop: () => Promise<void>;
let server: ServerProcess;
let nodePid: number;
let port: number;
let world: World;
let site: Server;
let siteBase: string;

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://site').pathname;
  const html = (body: string) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const stream = (block: Buffer, size: number) => {
    // Written as fast as the client reads, until `size` (Infinity: never ends) or the client leaves.
    res.writeHead(200, { 'content-type': 'text/html', ...(Number.isFinite(size) ? { 'content-length': size } : {}) });
    let sent = 0;
    let open = true;
    res.on('close', () => (open = false));
    const pump = () => {
      while (open && sent < size) {
        sent += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
      if (open) res.end();
    };
    pump();
  };
  if (path === '/robots.txt') return void res.writeHead(404).end();
  if (path.startsWith('/loop/'))
    return html(
      `<!doctype html><html><head><title>Loop</title></head><body><main><p>Seite ${path} im Kreis, mit genug Text für einen Abschnitt.</p>` +
        `<a href="/loop/1">1</a><a href="/loop/2">2</a><a href="/loop/3">3</a><a href="/loop/1#again">1</a></main></body></html>`,
    );
  if (path === '/huge') return stream(Buffer.alloc(64 * 1024, 'a'), 50 * MB);
  if (path === '/endless') return stream(Buffer.from('<p>' + 'endlos '.repeat(9000) + '</p>'), Infinity);
  if (path === '/largest') return html(largeHtml(PAGE_LIMIT - 64 * 1024));
  if (path === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/' }).end();
  res.writeHead(404).end('not found');
}

/** About `bytes` of HTML: headings and paragraphs of varied words, as a long real page has. */
function largeHtml(bytes: number): string {
  const parts = ['<!doctype html><html><head><title>Lang</title></head><body><main>'];
  let size = parts[0]!.length;
  for (let i = 0; size < bytes - 200; i++) {
    const part =
      i % 20 === 0
        ? `<h2>Abschnitt ${i / 20}</h2>`
        : `<p>Absatz ${i}: Die Werkstatt prüft Bremse ${i % 97}, Filter ${i % 89} und Öl ${i % 83} nach Vorgabe.</p>`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  parts.push('</main></body></html>');
  return parts.join('');
}

beforeAll(async () => {
  const database = await createServerDatabase();
  drop = database.drop;
  db = createDb(database.url, 2);
  const builders = new Builders(db, { JWT_SECRET: 'unused-here' } as Config, async () => {});
  const [dir, seeded] = await Promise.all([buildDist(), builders.world()]);
  buildDir = dir;
  world = seeded;
  site = createServer(handle);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteBase = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  server = spawnServer('npm', ['run', 'start:prod'], {
    // The site above is on 127.0.0.1; the metadata address stays forbidden even so.
    env: { DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    cwd: buildDir,
  });
  ({ nodePid, port } = await waitUntilListening(server));
});

afterAll(async () => {
  killLeftovers();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
  await db?.destroy();
  await drop?.();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

function residentMb(field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${nodePid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]) / 1024;
}

const kbPath = () => `/v1/agents/${world.agentId}/knowledge-base`;

/**
 * A multipart upload streamed in 1 MB writes, on a connection of its own (see `api`); answers with the
 * status (and the body when JSON). The server may answer 413 and close before the body is sent: the
 * answer counts, not the write error.
 */
function upload(data: Buffer, filename: string): Promise<{ status: number; body: { id?: string } }> {
  const boundary = 'kbmemoryboundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `${kbPath()}/files`,
        method: 'POST',
        agent: false,
        headers: {
          'X-API-Key': world.key,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': head.length + data.length + tail.length,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : {} }));
        res.on('error', reject);
      },
    );
    req.on('error', () => undefined);
    req.write(head);
    for (let at = 0; at < data.length; at += MB) req.write(data.subarray(at, at + MB));
    req.end(tail);
  });
}

/**
 * One request on a connection of its own: a keep-alive connection left idle for the server's
 * timeout (5 s), which a machine busy with the parallel test files makes likely, can be closed just
 * as a request is sent on it (ECONNRESET). That is not what this test judges; its memory and the
 * process staying up are.
 */
function api(method: string, path: string, body?: object): Promise<{ status: number; body: Doc }> {
  const payload = body ? JSON.stringify(body) : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent: false,
        headers: { 'X-API-Key': world.key, ...(payload ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) as Doc }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

type Doc = {
  id: string;
  status: string;
  failure_reason: string | null;
  sync_status: string | null;
  sync_errors?: { url: string; error: string }[];
};

const settled = (doc: Doc) =>
  !['pending', 'processing'].includes(doc.status) && !['pending', 'syncing'].includes(doc.sync_status ?? '');

/** Waits until every document has ended, within the pipeline's own time limit. */
async function allSettled(ids: string[]): Promise<Map<string, Doc>> {
  const docs = new Map<string, Doc>();
  await waitFor(
    async () => {
      for (const id of ids) {
        if (docs.has(id)) continue;
        const { body } = await api('GET', `${kbPath()}/${id}`);
        if (settled(body)) docs.set(id, body);
      }
      return docs.size === ids.length;
    },
    KB_PROCESSING_TIMEOUT_SECONDS * 1000,
    'every document to end',
  );
  return docs;
}

async function uploaded(data: Buffer, filename: string): Promise<string> {
  const res = await upload(data, filename);
  expect(res.status, filename).toBe(202);
  return res.body.id!;
}

async function webSource(path: string, maxPages = 1): Promise<string> {
  const res = await api('POST', `${kbPath()}/urls`, { url: `${siteBase}${path}`, crawl: { max_pages: maxPages } });
  expect(res.status, path).toBe(202);
  return res.body.id;
}

describe('npm run start:prod: the knowledge-base worker under hostile files and pages', () => {
  it(
    'ends each with its reason, keeps working, never exits and stays within its memory bound',
    { timeout: (KB_PROCESSING_TIMEOUT_SECONDS + 120) * 1000 },
    async () => {
      let exited = false;
      void server.exited.then(() => (exited = true));
      // A server that died says why on its stderr (an out-of-memory abort, a crash).
      onTestFailed(() => console.error(`server output (last 8000 characters):\n${server.output().slice(-8000)}`));

      // Warm: every extractor loaded and run once.
      const warm = await Promise.all([
        uploaded(makePdf({ pages: [['Preisliste', 'Haarschnitt 28 Euro']] }), 'warm.pdf'),
        uploaded(makeDocx([{ heading: 'Öffnungszeiten' }, { bullet: 'Montag 8 bis 18 Uhr' }]), 'warm.docx'),
        uploaded(Buffer.from('<html><body><h1>Warm</h1><p>Ein Absatz zum Aufwärmen.</p></body></html>'), 'w.html'),
        webSource('/loop/1'),
      ]);
      for (const doc of (await allSettled(warm)).values()) expect(doc.status).toBe('ready');
      // A file ends the thread kept for the next web page before its own starts, and its own before
      // it is ready: the warm RSS then holds no extraction thread.
      const last = await uploaded(Buffer.from('Zum Schluss des Aufwärmens: eine kleine Datei.'), 'warm.txt');
      expect((await allSettled([last])).get(last)!.status).toBe('ready');
      const idle = residentMb('VmRSS');
      const bound = idle + MARGIN_MB;

      const executable = await upload(makeExecutable(), 'preise.pdf');
      expect(executable.status).toBe(415);
      const tooLarge = await upload(Buffer.from(largeHtml(50 * MB)), 'huge.html');
      expect(tooLarge.status).toBe(413);

      const expected = new Map<string, Partial<Doc>>();
      const file = async (data: Buffer, name: string, outcome: Partial<Doc>) =>
        expected.set(await uploaded(data, name), outcome);
      const page = async (path: string, outcome: Partial<Doc>, maxPages = 1) =>
        expected.set(await webSource(path, maxPages), outcome);
      const bomb = { status: 'failed', failure_reason: 'too_large_unpacked' };
      await file(makeZipBombDocx(1024 * MB), 'bomb.docx', bomb);
      await file(makeZipBombDocx(1024 * MB, { lieAboutSize: true }), 'liar.docx', bomb);
      // Small packed and within the unpack limit (12 MB of XML), but mammoth's model of it is larger
      // than the whole production heap.
      const paragraphs = Array.from({ length: 100_000 }, (_, i) => ({ paragraph: `Absatz ${i}: Bremse und Filter.` }));
      await file(makeDocx(paragraphs), 'paragraphs.docx', bomb);
      await file(makePdf({ blankPages: 10_000 }), 'pages.pdf', { status: 'failed', failure_reason: 'too_many_pages' });
      await file(makePdf({ pages: [['Geheim']], encrypted: true }), 'secret.pdf', {
        status: 'failed',
        failure_reason: 'encrypted',
      });
      await file(makePdf({ pages: [['Abgeschnitten']] }).subarray(0, 200), 'cut.pdf', {
        status: 'failed',
        failure_reason: 'corrupt',
      });
      await file(Buffer.from(largeHtml(FILE_LIMIT - MB)), 'largest.html', { status: 'ready' });
      const unreachable = { status: 'failed', failure_reason: 'unreachable', sync_status: 'failed' };
      await page('/huge', unreachable);
      await page('/endless', unreachable);
      await page('/to-metadata', unreachable);
      await page('/loop/1', { status: 'ready', sync_status: 'synced' }, 50);
      await page('/largest', { status: 'ready', sync_status: 'synced' });

      const docs = await allSettled([...expected.keys()]);
      for (const [id, outcome] of expected) expect(docs.get(id), id).toMatchObject(outcome);

      // And afterwards, an ordinary document.
      const after = await uploaded(Buffer.from('Nach den bösen Dateien: Termine gibt es ab 8 Uhr.'), 'after.txt');
      expect((await allSettled([after])).get(after)!.status).toBe('ready');

      const highWater = residentMb('VmHWM');
      console.info(
        `kb-worker-memory: RSS ${Math.round(idle)} MB warm, VmHWM ${Math.round(highWater)} MB, bound ${Math.round(bound)} MB`,
      );
      expect(exited).toBe(false);
      expect(isAlive(nodePid)).toBe(true);
      expect(highWater).toBeLessThan(bound);
    },
  );
});
