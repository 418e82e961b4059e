import { Worker } from 'node:worker_threads';
import { KB_PROCESSING_TIMEOUT_SECONDS } from '../../jobs/queue-definitions.js';
import { ExtractionError, type ExtractableType, type ExtractLimits } from './extract.js';
import type { ThreadAnswer, ThreadInput } from './extract-thread.js';

/**
 * Heap of the thread one extraction runs in. The parsers build far more than the file: mammoth's
 * model of a DOCX costs about fifty times its document.xml (a 300 KB upload of 100,000 paragraphs
 * unpacks to 12 MB of XML, within the unpack limit, and needs more than the production heap of
 * 160 MB), pdf.js and a DOM of HTML less but still many times their input. In a thread of its own
 * with this limit, such a file ends the thread (`too_large_unpacked`), not the server; the server's
 * heap and event loop never carry a parse. 96 MB reads a DOCX of about 15,000 paragraphs.
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

/** The extraction before this one; each waits for it (see extractIsolated). */
let previous: Promise<unknown> = Promise.resolve();

/**
 * extractText in a worker thread with a heap limit of its own, one thread at a time per process:
 * the process then holds one thread's heap, not one per document processed side by side (the other
 * document's database work goes on meanwhile). The file's bytes are moved to the thread when they
 * own their memory (no copy), copied otherwise. Resolves with the text; rejects with an
 * ExtractionError (the file's reason, or `too_large_unpacked` when the thread ran out of heap) or
 * an UnexpectedExtractionError (a bug, for the log).
 */
export function extractIsolated(
  type: ExtractableType,
  data: Buffer,
  limits: ExtractLimits,
  options: { heapMb?: number; timeoutMs?: number } = {},
): Promise<string> {
  const heapMb = options.heapMb ?? EXTRACT_THREAD_HEAP_MB;
  const timeoutMs = options.timeoutMs ?? EXTRACT_TIMEOUT_MS;
  const run = previous.then(() => inThread(type, data, limits, heapMb, timeoutMs));
  previous = run.catch(() => undefined);
  return run;
}

function inThread(
  type: ExtractableType,
  data: Buffer,
  limits: ExtractLimits,
  heapMb: number,
  timeoutMs: number,
): Promise<string> {
  const { entry, eval: isEval } = threadEntry();
  const owned = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  const input: ThreadInput = { type, data: owned ? data : new Uint8Array(data), limits };
  return new Promise<string>((resolve, reject) => {
    let answer: ThreadAnswer | undefined;
    const thread = new Worker(entry, {
      eval: isEval,
      workerData: input,
      transferList: [input.data.buffer as ArrayBuffer],
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 },
      stdout: false,
      stderr: false,
    });
    // A parser that does not end (a file made to make it loop) is stopped, and the file fails.
    const timer = setTimeout(() => {
      answer ??= { reason: 'corrupt', message: 'Reading the file took longer than allowed' };
      void thread.terminate();
    }, timeoutMs);
    thread.once('message', (message: ThreadAnswer) => (answer ??= message));
    thread.once('error', (error: NodeJS.ErrnoException) => {
      answer ??=
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? { reason: 'too_large_unpacked', message: 'The file needs more memory to read than allowed' }
          : { unexpected: `${error.name}: ${error.message}` };
    });
    thread.once('exit', () => {
      clearTimeout(timer);
      if (answer && 'text' in answer) resolve(answer.text);
      else if (answer && 'reason' in answer) reject(new ExtractionError(answer.reason, answer.message));
      else reject(new UnexpectedExtractionError(answer?.unexpected ?? 'The extraction thread ended without an answer'));
    });
  });
}
