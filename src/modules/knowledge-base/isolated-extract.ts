import { Worker } from 'node:worker_threads';
import { KB_PROCESSING_TIMEOUT_SECONDS } from '../../jobs/queue-definitions.js';
import { ExtractionError, type ExtractableType, type ExtractLimits, type WebPage } from './extract.js';
import type { ThreadAnswer, ThreadInput } from './extract-thread.js';

/**
 * Heap of the thread one extraction runs in. The parsers build far more than the file: mammoth's
 * model of a DOCX costs about fifty times its document.xml (a 300 KB upload of 100,000 paragraphs
 * unpacks to 12 MB of XML, within the unpack limit, and needs more than the production heap of
 * 160 MB), pdf.js and a DOM of HTML less but still many times their input. In a thread of its own
 * with this limit, such a file ends the thread (`too_large_unpacked`), not the server; the server's
 * heap and event loop never carry a parse. Fetched web pages are read in the same thread, with the
 * same limits. 96 MB reads a DOCX of about 15,000 paragraphs.
 */
export const EXTRACT_THREAD_HEAP_MB = 96;

/**
 * How long one extraction may take: half the pipeline's time limit, so that a file stopped here
 * still ends `failed` (and its job done) before its job is presumed dead and run again.
 */
export const EXTRACT_TIMEOUT_MS = (KB_PROCESSING_TIMEOUT_SECONDS / 2) * 1000;

export class UnexpectedExtractionError extends Error {
  override readonly name = 'UnexpectedExtractionError';
}

/**
 * The worker entry: the compiled .js in production; from the TypeScript sources (npm start,
 * tests) the thread registers tsx first, since a thread does not inherit the parent's loader.
 */
function threadEntry(): { entry: string | URL; eval: boolean } {
  const fromSources = import.meta.url.endsWith('.ts');
  const file = new URL(`./extract-thread.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSources) return { entry: file, eval: false };
  return {
    entry: `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(file.href)}); })`,
    eval: true,
  };
}

/** How the thread is limited; the defaults outside tests. */
export type ThreadLimits = { heapMb?: number; timeoutMs?: number };

/** The extraction before this one; each waits for it (see isolated). */
let previous: Promise<unknown> = Promise.resolve();

/**
 * extractText in the extraction thread (see isolated). Resolves with the text; rejects with an
 * ExtractionError (the file's reason, or `too_large_unpacked` when the thread ran out of heap) or
 * an UnexpectedExtractionError (a bug, for the log).
 */
export async function extractIsolated(
  type: ExtractableType,
  data: Buffer,
  limits: ExtractLimits,
  options: ThreadLimits = {},
): Promise<string> {
  const answer = await isolated({ kind: 'file', type, data, limits }, options);
  if (!('text' in answer)) throw new UnexpectedExtractionError('The extraction thread answered a page for a file');
  return answer.text;
}

/**
 * A fetched HTML page read in the extraction thread (webPage in extract.ts: its title, main text
 * and links to `origin`, resolved against `base`), so that the server's event loop never parses
 * markup: a page at MAX_HTML_CHARS takes 0.6-2 s of CPU on a 2-vCPU machine, the more links the
 * longer, and the event loop spends 20-80 ms on it here (the bytes out, the text back). Rejects
 * as extractIsolated does, with `too_large_unpacked` when the page needs more than the thread's
 * heap and `corrupt` when it takes longer than the thread's time.
 */
export async function readPageIsolated(
  data: Buffer,
  base: URL,
  origin: string,
  options: ThreadLimits = {},
): Promise<WebPage> {
  const answer = await isolated({ kind: 'page', data, base: base.toString(), origin }, options);
  if (!('page' in answer)) throw new UnexpectedExtractionError('The extraction thread answered a file for a page');
  return answer.page;
}

type Answered = Extract<ThreadAnswer, { text: string } | { page: WebPage }>;

/**
 * How long a thread that read a web page is kept for the next page. A crawl's pages come one after
 * another, each after its fetch, and a new thread takes about 0.3 s to start and load linkedom and
 * Readability on a busy 2-vCPU machine (1-2 s from the TypeScript sources, in tests), more than
 * reading most pages takes. A page leaves little but those modules behind, so the next page has
 * about the same heap in a kept thread as in a new one. A file gets a new thread each time and ends a
 * kept one first: the modules a PDF or DOCX leaves loaded would count against the next one's heap,
 * and only one thread is alive at a time.
 */
export const PAGE_THREAD_IDLE_MS = 2000;

/** The page thread kept after its last answer; ended when it has been idle PAGE_THREAD_IDLE_MS. */
let kept: { thread: Worker; heapMb: number; idle: NodeJS.Timeout } | undefined;
/** The end of the last thread stopped; a new one starts only after it. */
let ending: Promise<unknown> = Promise.resolve();

/**
 * One extraction in a worker thread with a heap limit of its own, one thread at a time per
 * process: the process then holds one thread's heap, not one per document processed side by side
 * (the other document's database work goes on meanwhile). The bytes are moved to the thread when
 * they own their memory (no copy; the caller's buffer is empty afterwards), copied otherwise.
 */
function isolated(input: ThreadInput, options: ThreadLimits): Promise<Answered> {
  const heapMb = options.heapMb ?? EXTRACT_THREAD_HEAP_MB;
  const timeoutMs = options.timeoutMs ?? EXTRACT_TIMEOUT_MS;
  const run = previous.then(async () => inThread(await threadFor(input.kind, heapMb), heapMb, input, timeoutMs));
  previous = run.catch(() => undefined);
  return run;
}

/** The kept page thread for a page with its heap; otherwise a new thread, once the kept one has ended. */
async function threadFor(kind: ThreadInput['kind'], heapMb: number): Promise<Worker> {
  const last = kept;
  kept = undefined;
  if (last) {
    clearTimeout(last.idle);
    if (kind === 'page' && last.heapMb === heapMb) {
      last.thread.ref();
      return last.thread;
    }
    ending = last.thread.terminate();
  }
  await ending;
  const { entry, eval: isEval } = threadEntry();
  const thread = new Worker(entry, {
    eval: isEval,
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 },
    stdout: false,
    stderr: false,
  });
  // While kept, no extraction listens: a thread that fails then just ends, and is not kept.
  thread.on('error', () => undefined);
  thread.on('exit', () => {
    if (kept?.thread !== thread) return;
    clearTimeout(kept.idle);
    kept = undefined;
  });
  return thread;
}

function keep(thread: Worker, heapMb: number): void {
  const idle = setTimeout(() => {
    kept = undefined;
    ending = thread.terminate();
  }, PAGE_THREAD_IDLE_MS);
  // A kept thread never holds the process open (a shutdown, the end of a test run).
  idle.unref();
  thread.unref();
  kept = { thread, heapMb, idle };
}

/**
 * Sends one file or page to the thread and waits for its answer. A page read is answered as soon as
 * it comes and its thread kept; anything else is answered once its thread has ended, so that its
 * heap is gone before the next thread starts.
 */
function inThread(thread: Worker, heapMb: number, input: ThreadInput, timeoutMs: number): Promise<Answered> {
  const { data } = input;
  const owned = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  const sent: ThreadInput = { ...input, data: owned ? data : new Uint8Array(data) };
  const what = input.kind === 'page' ? 'page' : 'file';
  return new Promise<Answered>((resolve, reject) => {
    let answer: ThreadAnswer | undefined;
    const settle = () => {
      clearTimeout(timer);
      thread.off('message', onMessage).off('error', onError).off('exit', onExit);
    };
    const onMessage = (message: ThreadAnswer) => {
      answer ??= message;
      if (!(input.kind === 'page' && 'page' in answer)) return void thread.terminate();
      settle();
      keep(thread, heapMb);
      resolve(answer);
    };
    const onError = (error: NodeJS.ErrnoException) => {
      answer ??=
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { reason: 'too_large_unpacked', message: `The ${what} needs more memory to read than allowed` }
          : { unexpected: `${error.name}: ${error.message}` };
    };
    const onExit = () => {
      settle();
      if (answer && ('text' in answer || 'page' in answer)) resolve(answer);
      else if (answer && 'reason' in answer) reject(new ExtractionError(answer.reason, answer.message));
      else reject(new UnexpectedExtractionError(answer?.unexpected ?? 'The extraction thread ended without an answer'));
    };
    // A parser that does not end (a file or page made to make it loop) is stopped, and that file or
    // page fails.
    const timer = setTimeout(() => {
      answer ??= { reason: 'corrupt', message: `Reading the ${what} took longer than allowed` };
      void thread.terminate();
    }, timeoutMs);
    thread.on('message', onMessage).on('error', onError).on('exit', onExit);
    thread.postMessage(sent, [sent.data.buffer as ArrayBuffer]);
  });
}
