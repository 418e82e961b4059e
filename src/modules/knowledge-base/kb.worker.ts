import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { inTransaction, type Db } from '../../db/knex.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import { DEFAULT_MAX_CHUNK_CHARS, splitIntoChunks } from './chunking.js';
import {
  ExtractionError,
  FAILURE_MESSAGES,
  MAX_TEXT_CHARS,
  MAX_UNPACKED_BYTES,
  splitSections,
  type ExtractableType,
} from './extract.js';
import type { ClaimedDocument, KnowledgeBaseIndexRepository, ProcessingOutcome } from './kb-index.repository.js';
import { documentEvent } from './kb-events.js';
import { extractIsolated } from './isolated-extract.js';
import type { JobQueue } from '../../jobs/queue.js';
import { ScheduledWorker } from '../../jobs/scheduled-worker.js';
import {
  KB_JOB_OPTIONS,
  KB_PROCESS_QUEUE,
  KB_PROCESSING_TIMEOUT_SECONDS,
  KB_SWEEP_QUEUE,
} from '../../jobs/queue-definitions.js';

export type KbProcessJob = { documentId: string };

/**
 * Enqueues processing in the transaction of the change. The queue uses pg-boss's `short` policy
 * keyed by document: while a job for the document still waits, no second one is queued (the
 * waiting one reads the newest content when it runs).
 */
export class KnowledgeBaseJobs {
  constructor(private readonly queue: JobQueue) {}

  async enqueue(documentId: string, trx?: Knex | Knex.Transaction): Promise<void> {
    await this.queue.send(KB_PROCESS_QUEUE, { documentId } satisfies KbProcessJob, {
      ...KB_JOB_OPTIONS,
      singletonKey: documentId,
      trx,
    });
  }
}

export type ProcessOutcome = 'ready' | 'error' | 'failed' | 'superseded' | 'skipped';

export type Splitter = (text: string, maxChars: number) => string[] | Promise<string[]>;
export type ProcessorOptions = {
  maxChunkChars?: number;
  split?: Splitter;
  /** Records kb.document.ready / kb.document.failed in the transaction that ends processing. */
  events?: EventRecorder;
  /** KB_MAX_PDF_PAGES */
  maxPdfPages?: number;
  /** What a DOCX may unpack to (50 MB). */
  maxUnpackedBytes?: number;
  /** Web sources (source_type url): synced instead of processed. */
  web?: { process(documentId: string, jobId: string): Promise<ProcessOutcome>; sweep(): Promise<number> };
};

/**
 * The knowledge-base pipeline: pending -> processing -> ready (with chunk_count) or error (no text
 * to index) or failed (processing broke; a content edit retries). Runs as a pg-boss worker in the
 * server process; tests call `process` directly or through `queue.runPending`.
 */
export class KnowledgeBaseProcessor {
  private readonly maxChunkChars: number;
  private readonly split: Splitter;
  private readonly events: EventRecorder | undefined;
  private readonly maxPdfPages: number;
  private readonly maxUnpackedBytes: number;
  private readonly web: ProcessorOptions['web'];

  constructor(
    private readonly db: Db,
    private readonly index: KnowledgeBaseIndexRepository,
    private readonly jobs: KnowledgeBaseJobs,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: ProcessorOptions = {},
  ) {
    this.maxChunkChars = options.maxChunkChars ?? DEFAULT_MAX_CHUNK_CHARS;
    this.split = options.split ?? splitIntoChunks;
    this.events = options.events;
    this.maxPdfPages = options.maxPdfPages ?? 500;
    this.maxUnpackedBytes = options.maxUnpackedBytes ?? MAX_UNPACKED_BYTES;
    this.web = options.web;
  }

  private staleBefore(now: Date): Date {
    return new Date(now.getTime() - KB_PROCESSING_TIMEOUT_SECONDS * 1000);
  }

  async process(documentId: string, jobId: string): Promise<ProcessOutcome> {
    if (this.web && (await this.index.sourceTypeOf(documentId)) === 'url') return this.web.process(documentId, jobId);
    const now = this.clock.now();
    const claimed = await this.index.claim(documentId, jobId, now, this.staleBefore(now));
    // Deleted, already done, or being processed by a live worker right now.
    if (!claimed) return 'skipped';
    const outcome = await this.outcomeFor(claimed);
    const status = 'chunks' in outcome ? 'ready' : outcome.status;
    const finishedAt = this.clock.now();
    const committed = await inTransaction(this.db, async (trx) => {
      if (!(await this.index.with(trx).finish(claimed, outcome, finishedAt))) return false;
      if (!this.events) return true;
      await this.events.record(
        trx,
        documentEvent(
          status === 'ready' ? 'kb.document.ready' : 'kb.document.failed',
          claimed,
          {
            status,
            chunk_count: 'chunks' in outcome ? outcome.chunks.length : 0,
            error_message: 'chunks' in outcome ? null : outcome.message,
          },
          finishedAt,
        ),
      );
      return true;
    });
    this.logger.info(
      { document_id: documentId, job_id: jobId, status, committed },
      'knowledge base document processed',
    );
    return committed ? status : 'superseded';
  }

  private async outcomeFor(claimed: ClaimedDocument): Promise<ProcessingOutcome> {
    if (claimed.source_type === 'file') return this.fileOutcome(claimed);
    if (claimed.content === null || claimed.content.trim() === '') {
      return { status: 'error', message: 'The document has no text to index' };
    }
    try {
      const chunks = await this.split(claimed.content, this.maxChunkChars);
      if (chunks.length === 0) return { status: 'error', message: 'The document has no text to index' };
      return { chunks };
    } catch (error) {
      this.logger.error({ err: error, document_id: claimed.id }, 'knowledge base chunking failed');
      return { status: 'failed', message: 'Processing failed; change the content to try again' };
    }
  }

  /**
   * An uploaded file: its text extracted with its structure (headings, lists), chunked section by
   * section. A file that cannot be read ends `failed` with its reason; nothing here throws.
   */
  private async fileOutcome(claimed: ClaimedDocument): Promise<ProcessingOutcome> {
    try {
      const data = await this.index.fileBytes(claimed.id);
      if (!data || !claimed.source) throw new ExtractionError('corrupt', 'The uploaded file is no longer stored');
      // In a thread with a heap of its own: a file that needs too much memory to parse ends that
      // thread, not the server.
      const text = await extractIsolated(claimed.source.media_type as ExtractableType, data, {
        maxPdfPages: this.maxPdfPages,
        maxUnpackedBytes: this.maxUnpackedBytes,
        maxTextChars: MAX_TEXT_CHARS,
      });
      const chunks = splitSections(text, this.maxChunkChars, (t, max) => splitIntoChunks(t, max));
      if (chunks.length === 0) throw new ExtractionError('no_text');
      return { chunks };
    } catch (error) {
      const reason = error instanceof ExtractionError ? error.reason : 'corrupt';
      if (!(error instanceof ExtractionError))
        this.logger.warn({ err: error, document_id: claimed.id }, 'knowledge base file extraction failed');
      const message = error instanceof ExtractionError ? error.message : FAILURE_MESSAGES.corrupt;
      return { status: 'failed', message, reason };
    }
  }

  /** Re-enqueues documents left in processing by a dead worker, or pending without a live job. */
  async recoverStale(): Promise<number> {
    const ids = await this.index.findStale(this.staleBefore(this.clock.now()));
    for (const id of ids) await this.jobs.enqueue(id);
    // Web sources: refreshes that are due, and syncs a dead worker left.
    if (this.web) await this.web.sweep();
    if (ids.length > 0) this.logger.warn({ documents: ids.length }, 'knowledge base documents re-enqueued');
    return ids.length;
  }
}

/**
 * Documents one instance processes side by side: while one is chunked in Node, another's chunks
 * are indexed in PostgreSQL (a batch of ten large documents is ready sooner than one by one).
 */
export const KB_PARALLEL_DOCUMENTS = 2;

/** Registers the pipeline and its sweep (every five minutes) with the job queue. */
export class KnowledgeBaseWorker extends ScheduledWorker<number> {
  constructor(
    queue: JobQueue,
    private readonly processor: KnowledgeBaseProcessor,
  ) {
    // The scheduled pass is the sweep; start() adds the pipeline's own workers.
    super('knowledge-base', queue, { queue: KB_SWEEP_QUEUE, cron: '*/5 * * * *' }, () => processor.recoverStale());
  }

  override async start(): Promise<void> {
    // Each worker takes one job at a time and fetches the next at once; claims keep documents apart.
    for (let i = 0; i < KB_PARALLEL_DOCUMENTS; i++) {
      await this.queue.work<KbProcessJob>(KB_PROCESS_QUEUE, async (data, job) => {
        await this.processor.process(data.documentId, job.id);
      });
    }
    await super.start();
  }

  override async stop(): Promise<void> {
    await this.queue.boss.offWork(KB_PROCESS_QUEUE);
    await super.stop();
  }
}
