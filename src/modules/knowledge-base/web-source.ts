import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import robotsParserModule from 'robots-parser';
import type { Clock } from '../../clock.js';
import { inTransaction, type Db } from '../../db/knex.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import {
  guardedRequest,
  OutgoingRequestError,
  type GuardOptions,
  type OutgoingResponse,
} from '../../outgoing/guarded-request.js';
import { KB_PROCESSING_TIMEOUT_SECONDS } from '../../jobs/queue-definitions.js';
import { DEFAULT_MAX_CHUNK_CHARS, splitIntoChunks } from './chunking.js';
import { ExtractionError, splitSections, type WebPage } from './extract.js';
import { readPageIsolated, type ThreadLimits } from './isolated-extract.js';
import { documentEvent } from './kb-events.js';
import type { KnowledgeBaseJobs, ProcessOutcome } from './kb.worker.js';
import { claimable, claimedColumns } from './kb-index.repository.js';
import type { CrawlOptions } from './knowledge-base.repository.js';
import { documentSearchConfig, type TsConfig } from './text-search.js';

export type WebSourceOptions = {
  guard: GuardOptions;
  /** KB_MAX_PAGE_BYTES: a longer page is not read (per-page error). */
  maxPageBytes: number;
  maxChunkChars?: number;
  /** The guard itself; tests wrap it to make one address count as public. */
  request?: typeof guardedRequest;
  /** Records kb.document.ready / kb.document.failed in the transaction that ends a sync. */
  events?: EventRecorder;
  /** The heap and time of the thread a page is read in (isolated-extract.ts); tests make them small. */
  thread?: ThreadLimits;
};

type Robots = { isAllowed(url: string, userAgent?: string): boolean | undefined };
/** robots-parser is CommonJS; its default export is the parser function. */
const robotsParser = robotsParserModule as object as (url: string, content: string) => Robots;

/** The web-source settings from the configuration; private targets only as WEBHOOK_ALLOW_PRIVATE_TARGETS allows. */
export function webSourceOptionsFromConfig(config: {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
  KB_FETCH_TIMEOUT_MS: number;
  KB_MAX_PAGE_BYTES: number;
}): WebSourceOptions {
  return {
    guard: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, timeoutMs: config.KB_FETCH_TIMEOUT_MS },
    maxPageBytes: config.KB_MAX_PAGE_BYTES,
  };
}

const USER_AGENT = 'VoiceAgentKnowledgeBase/1.0';
const MAX_REDIRECTS = 5;
const ROBOTS_MAX_BYTES = 512 * 1024;
const INSERT_BATCH = 200;

type PageState = {
  url: string;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  links: string[] | null;
};

type Fetched =
  | { kind: 'unchanged'; url: string; links: string[] }
  | {
      kind: 'changed';
      url: string;
      title: string | null;
      text: string;
      hash: string;
      etag: string | null;
      lastModified: string | null;
      links: string[];
    }
  | { kind: 'error'; url: string; error: string };

type Claimed = {
  id: string;
  organization_id: string;
  agent_id: string | null;
  title: string;
  scope: 'agent' | 'organization';
  source_url: string;
  crawl: CrawlOptions;
  refresh: 'never' | 'daily' | 'weekly';
  ts_config: TsConfig;
};

const REFRESH_MS = { daily: 86_400_000, weekly: 7 * 86_400_000 } as const;

/**
 * What a sync does to the document's pages: new ones, ones whose text changed, ones no longer
 * reached (or now failing), and ones left as they were. A sync whose start page failed touches none.
 */
function pageCounts(
  known: Map<string, PageState>,
  fetched: Fetched[],
  reached: Set<string>,
  startFailed: boolean,
): { added: number; changed: number; removed: number; unchanged: number } {
  if (startFailed) return { added: 0, changed: 0, removed: 0, unchanged: 0 };
  const changed = fetched.filter((f) => f.kind === 'changed');
  return {
    added: changed.filter((f) => !known.has(f.url)).length,
    changed: changed.filter((f) => known.has(f.url)).length,
    removed: [...known.keys()].filter((url) => !reached.has(url)).length,
    unchanged: fetched.filter((f) => f.kind === 'unchanged').length,
  };
}

/** A URL without its fragment; the crawl's identity of a page. */
function pageKey(url: URL): string {
  const copy = new URL(url);
  copy.hash = '';
  return copy.toString();
}

/**
 * Web sources: the start page and, with `crawl.max_pages` > 1, the same-origin pages it links to
 * (breadth first, each page once, robots.txt respected), every request and every redirect through
 * the outgoing-request guard. Each page is a section of the document: its main text (Readability),
 * chunked, each chunk carrying the page's URL in its metadata. A sync asks with the validators of
 * the last one (If-None-Match, If-Modified-Since) and compares a hash of the text, so unchanged
 * pages keep their chunks; changed ones are re-chunked and pages no longer reached are dropped.
 */
export class WebSourceSync {
  private readonly maxChunkChars: number;
  private readonly request: typeof guardedRequest;

  constructor(
    private readonly db: Db,
    private readonly jobs: KnowledgeBaseJobs,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: WebSourceOptions,
  ) {
    this.maxChunkChars = options.maxChunkChars ?? DEFAULT_MAX_CHUNK_CHARS;
    this.request = options.request ?? guardedRequest;
  }

  private staleBefore(now: Date): Date {
    return new Date(now.getTime() - KB_PROCESSING_TIMEOUT_SECONDS * 1000);
  }

  async process(documentId: string, jobId: string): Promise<ProcessOutcome> {
    const now = this.clock.now();
    const claimed = await this.claim(documentId, jobId, now);
    if (!claimed) return 'skipped';
    const known = new Map<string, PageState>(
      (
        (await this.db('kb_pages')
          .where({ document_id: claimed.id })
          .select('url', 'etag', 'last_modified', 'content_hash', 'links')) as PageState[]
      ).map((p) => [p.url, p]),
    );
    let fetched: Fetched[];
    try {
      fetched = await this.crawl(claimed, known);
    } catch (error) {
      this.logger.error({ err: error, document_id: claimed.id }, 'web source crawl failed');
      fetched = [{ kind: 'error', url: claimed.source_url, error: 'The crawl failed' }];
    }
    const outcome = await this.finish(claimed, jobId, known, fetched);
    this.logger.info({ document_id: documentId, job_id: jobId, outcome }, 'web source synced');
    return outcome;
  }

  private async claim(documentId: string, jobId: string, now: Date): Promise<Claimed | undefined> {
    const [row] = await this.db('kb_documents as d')
      .where({ 'd.id': documentId, 'd.source_type': 'url' })
      .andWhere(claimable('sync_status', 'syncing', jobId, this.staleBefore(now)))
      .update({ sync_status: 'syncing', processing_started_at: now, processing_job_id: jobId })
      .returning(claimedColumns(this.db, ['d.source_url', 'd.crawl', 'd.refresh']));
    return row && documentSearchConfig(row);
  }

  private async crawl(claimed: Claimed, known: Map<string, PageState>): Promise<Fetched[]> {
    const start = new URL(claimed.source_url);
    const robots = await this.robots(start);
    const results: Fetched[] = [];
    const seen = new Set<string>([pageKey(start)]);
    const queue: URL[] = [start];
    const maxPages = claimed.crawl.max_pages;
    // Errors count too: a site of broken links ends the crawl as surely as one of pages.
    while (queue.length > 0 && results.length < maxPages) {
      const url = queue.shift()!;
      const key = pageKey(url);
      if (robots && robots.isAllowed(key, USER_AGENT) === false) {
        results.push({ kind: 'error', url: key, error: 'Disallowed by robots.txt' });
        continue;
      }
      const result = await this.fetchPage(url, known.get(key), start);
      results.push(result);
      if (result.kind === 'error' || maxPages === 1) continue;
      for (const link of result.links) {
        const next = new URL(link);
        const nextKey = pageKey(next);
        if (seen.has(nextKey) || next.origin !== start.origin) continue;
        const paths = claimed.crawl.include_paths;
        if (paths.length > 0 && !paths.some((p) => next.pathname.startsWith(p))) continue;
        seen.add(nextKey);
        queue.push(next);
      }
    }
    return results;
  }

  private async robots(start: URL): Promise<Robots | undefined> {
    const robotsUrl = new URL('/robots.txt', start).toString();
    try {
      const response = await this.request(
        { url: robotsUrl, headers: { 'user-agent': USER_AGENT } },
        { ...this.options.guard, maxResponseBytes: ROBOTS_MAX_BYTES },
      );
      if (response.status !== 200) return undefined;
      return robotsParser(robotsUrl, response.body.toString('utf8'));
    } catch {
      return undefined;
    }
  }

  /** One page, redirects followed by hand so that every hop passes the guard. */
  private async fetchPage(url: URL, state: PageState | undefined, start: URL): Promise<Fetched> {
    const key = pageKey(url);
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'text/html, text/plain;q=0.8' };
    if (state?.etag) headers['if-none-match'] = state.etag;
    if (state?.last_modified) headers['if-modified-since'] = state.last_modified;
    let current = url;
    let response: OutgoingResponse;
    for (let hop = 0; ; hop++) {
      try {
        response = await this.request(
          { url: current.toString(), headers },
          { ...this.options.guard, maxResponseBytes: this.options.maxPageBytes },
        );
      } catch (error) {
        const message =
          error instanceof OutgoingRequestError
            ? error.reason === 'timeout'
              ? 'The page did not answer in time'
              : error.message
            : 'The page could not be fetched';
        return { kind: 'error', url: key, error: message };
      }
      if (response.status < 300 || response.status >= 400 || response.status === 304) break;
      const location = response.headers.location;
      if (!location) return { kind: 'error', url: key, error: `Redirect (${response.status}) without a Location` };
      if (hop >= MAX_REDIRECTS) return { kind: 'error', url: key, error: 'Too many redirects' };
      try {
        current = new URL(location, current);
      } catch {
        return { kind: 'error', url: key, error: 'Redirect to an invalid address' };
      }
      if (current.protocol !== 'http:' && current.protocol !== 'https:')
        return { kind: 'error', url: key, error: 'Redirect to an address that is not http(s)' };
    }
    if (response.status === 304 && state) return { kind: 'unchanged', url: key, links: state.links ?? [] };
    if (response.status !== 200) return { kind: 'error', url: key, error: `The page answered ${response.status}` };
    if (response.truncated)
      return { kind: 'error', url: key, error: `The page is larger than ${this.options.maxPageBytes} bytes` };
    const read = await this.read(response, current, start, key);
    if ('error' in read) return { kind: 'error', url: key, error: read.error };
    const { title, text, links } = read;
    const hash = createHash('sha256').update(text).digest('hex');
    if (state && state.content_hash === hash) return { kind: 'unchanged', url: key, links };
    const header = (name: string) => {
      const value = response.headers[name];
      return typeof value === 'string' ? value.slice(0, 500) : null;
    };
    return {
      kind: 'changed',
      url: key,
      title,
      text,
      hash,
      etag: header('etag'),
      lastModified: header('last-modified'),
      links,
    };
  }

  /**
   * What a fetched page says: an HTML page read in the extraction thread (its main text, title and
   * same-origin links), so that its markup is never parsed on the event loop; a text page as it is.
   * A page the thread could not read (more heap or time than it has, or a bug) is that page's
   * error, as a page that could not be fetched is, and the crawl goes on.
   */
  private async read(
    response: OutgoingResponse,
    base: URL,
    start: URL,
    key: string,
  ): Promise<WebPage | { error: string }> {
    const type = String(response.headers['content-type'] ?? 'text/html').toLowerCase();
    if (type.includes('html')) {
      try {
        return await readPageIsolated(response.body, base, start.origin, this.options.thread);
      } catch (error) {
        if (error instanceof ExtractionError) return { error: error.message };
        this.logger.warn({ err: error, url: key }, 'web page could not be read');
        return { error: 'The page could not be read' };
      }
    }
    if (type.startsWith('text/')) return { title: null, text: response.body.toString('utf8'), links: [] };
    return { error: `Not a web page (${type.split(';')[0]})` };
  }

  private async finish(
    claimed: Claimed,
    jobId: string,
    known: Map<string, PageState>,
    fetched: Fetched[],
  ): Promise<ProcessOutcome> {
    const now = this.clock.now();
    const startFailed = fetched[0]?.kind === 'error';
    const errors = fetched.flatMap((f) => (f.kind === 'error' ? [{ url: f.url, error: f.error }] : []));
    const reached = new Set(fetched.filter((f) => f.kind !== 'error').map((f) => f.url));
    return inTransaction(this.db, async (trx) => {
      const current = await trx('kb_documents')
        .where({ id: claimed.id, organization_id: claimed.organization_id })
        .forUpdate()
        .first('sync_status', 'processing_job_id', 'status');
      if (!current || current.sync_status !== 'syncing' || current.processing_job_id !== jobId) return 'superseded';
      const pages = pageCounts(known, fetched, reached, startFailed);
      if (!startFailed) {
        // Pages no longer reached (and pages that now fail) lose their chunks.
        for (const url of known.keys()) if (!reached.has(url)) await this.dropPage(trx, claimed, url);
        for (const page of fetched) {
          if (page.kind === 'changed') await this.replacePage(trx, claimed, page, now);
          else if (page.kind === 'unchanged')
            await trx('kb_pages')
              .where({ document_id: claimed.id, url: page.url })
              .update({ fetched_at: now, error: null, links: JSON.stringify(page.links) });
        }
      }
      const [{ count }] = await trx('kb_chunks').where({ document_id: claimed.id }).count({ count: '*' });
      const chunkCount = Number(count);
      const syncStatus = startFailed ? 'failed' : errors.length > 0 ? 'partial' : 'synced';
      const hadNothing = chunkCount === 0;
      const status = hadNothing ? 'failed' : 'ready';
      const errorMessage = hadNothing ? (startFailed ? errors[0]!.error : 'The pages have no text to index') : null;
      await trx('kb_documents')
        .where({ id: claimed.id })
        .update({
          status,
          failure_reason: hadNothing ? (startFailed ? 'unreachable' : 'no_text') : null,
          error_message: errorMessage,
          chunk_count: chunkCount,
          sync_status: syncStatus,
          sync_errors: JSON.stringify(errors),
          last_synced_at: now,
          next_sync_at: claimed.refresh === 'never' ? null : new Date(now.getTime() + REFRESH_MS[claimed.refresh]),
          processing_started_at: null,
          processing_job_id: null,
          updated_at: now,
        });
      // A sync that changed nothing and left the document as it was is no news; one that failed is.
      const changed = pages.added + pages.changed + pages.removed > 0 || current.status !== status;
      if (this.options.events && (startFailed || hadNothing || changed)) {
        const sync = {
          status: syncStatus,
          pages_added: pages.added,
          pages_changed: pages.changed,
          pages_removed: pages.removed,
          pages_unchanged: pages.unchanged,
          error: startFailed ? errors[0]!.error : hadNothing ? errorMessage : null,
          errors,
        };
        await this.options.events.record(
          trx,
          documentEvent(
            startFailed || hadNothing ? 'kb.document.failed' : 'kb.document.ready',
            claimed,
            { status, chunk_count: chunkCount, error_message: errorMessage },
            now,
            { sync },
          ),
        );
      }
      return hadNothing ? 'failed' : 'ready';
    });
  }

  private async dropPage(trx: Knex.Transaction, claimed: Claimed, url: string): Promise<void> {
    await trx('kb_chunks').where({ document_id: claimed.id }).andWhereRaw("metadata->>'url' = ?", [url]).delete();
    await trx('kb_pages').where({ document_id: claimed.id, url }).delete();
  }

  private async replacePage(
    trx: Knex.Transaction,
    claimed: Claimed,
    page: Extract<Fetched, { kind: 'changed' }>,
    now: Date,
  ): Promise<void> {
    await trx('kb_chunks').where({ document_id: claimed.id }).andWhereRaw("metadata->>'url' = ?", [page.url]).delete();
    const text = page.title ? `# ${page.title}\n\n${page.text}` : page.text;
    const chunks = splitSections(text, this.maxChunkChars, (t, max) => splitIntoChunks(t, max));
    const [{ max }] = await trx('kb_chunks').where({ document_id: claimed.id }).max({ max: 'position' });
    let position = max === null ? 0 : Number(max) + 1;
    const metadata = JSON.stringify({ url: page.url, title: page.title });
    for (let startAt = 0; startAt < chunks.length; startAt += INSERT_BATCH) {
      await trx('kb_chunks').insert(
        chunks.slice(startAt, startAt + INSERT_BATCH).map((content) => ({
          document_id: claimed.id,
          organization_id: claimed.organization_id,
          position: position++,
          content,
          metadata,
          ts_config: claimed.ts_config,
          tsv: trx.raw('to_tsvector(?::regconfig, ?)', [claimed.ts_config, content]),
          created_at: now,
        })),
      );
    }
    await trx('kb_pages')
      .insert({
        document_id: claimed.id,
        organization_id: claimed.organization_id,
        url: page.url,
        title: page.title?.slice(0, 500) ?? null,
        etag: page.etag,
        last_modified: page.lastModified,
        content_hash: page.hash,
        links: JSON.stringify(page.links),
        error: null,
        fetched_at: now,
      })
      .onConflict(['document_id', 'url'])
      .merge();
  }

  /**
   * The module's schedule (from the knowledge-base sweep): web sources whose refresh is due are
   * marked for a sync and queued, and syncs left by a dead worker are queued again.
   */
  async sweep(limit = 500): Promise<number> {
    const now = this.clock.now();
    const due: { id: string }[] = await this.db('kb_documents')
      .where('source_type', 'url')
      .andWhere((q) =>
        q
          .where((d) => d.where('next_sync_at', '<=', now).whereNotIn('sync_status', ['pending', 'syncing']))
          .orWhere((s) =>
            s.where('sync_status', 'syncing').andWhere('processing_started_at', '<=', this.staleBefore(now)),
          )
          .orWhere((p) => p.where('sync_status', 'pending').andWhere('updated_at', '<=', this.staleBefore(now))),
      )
      .orderBy('next_sync_at')
      .limit(limit)
      .select('id');
    for (const { id } of due) {
      await inTransaction(this.db, async (trx) => {
        await trx('kb_documents')
          .where({ id })
          .whereNotIn('sync_status', ['pending', 'syncing'])
          .update({ sync_status: 'pending', updated_at: now });
        await this.jobs.enqueue(id, trx);
      });
    }
    return due.length;
  }
}
