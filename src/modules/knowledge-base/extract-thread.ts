import { parentPort } from 'node:worker_threads';
import {
  ExtractionError,
  extractText,
  webPage,
  type ExtractableType,
  type ExtractLimits,
  type FailureReason,
  type WebPage,
} from './extract.js';

/**
 * The entry of the thread extractions run in (isolated-extract.ts): answers each file or web page
 * it is sent, one at a time, until it is ended. A page comes as the bytes fetched, decoded here as
 * the text it is, with the address it was fetched from (links are resolved against it) and the
 * crawl's origin (links elsewhere are dropped); both as strings, which a message can carry. An error
 * that is not an ExtractionError comes back as `unexpected` (its message, for the log), as it would
 * have been thrown in the caller's thread.
 */
export type ThreadInput =
  | { kind: 'file'; type: ExtractableType; data: Uint8Array; limits: ExtractLimits }
  | { kind: 'page'; data: Uint8Array; base: string; origin: string };
export type ThreadAnswer =
  { text: string } | { page: WebPage } | { reason: FailureReason; message: string } | { unexpected: string };

async function answerFor(input: ThreadInput): Promise<ThreadAnswer> {
  const data = Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength);
  try {
    if (input.kind === 'page') return { page: await webPage(data.toString('utf8'), new URL(input.base), input.origin) };
    return { text: await extractText(input.type, data, input.limits) };
  } catch (error) {
    return error instanceof ExtractionError
      ? { reason: error.reason, message: error.message }
      : { unexpected: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

parentPort!.on('message', (input: ThreadInput) => {
  void answerFor(input).then((answer) => parentPort!.postMessage(answer));
});
