import { parentPort, workerData } from 'node:worker_threads';
import {
  ExtractionError,
  extractText,
  type ExtractableType,
  type ExtractLimits,
  type FailureReason,
} from './extract.js';

/**
 * The entry of the thread an extraction runs in (isolated-extract.ts): reads the file it was
 * handed, answers once and ends. An error that is not an ExtractionError comes back as `unexpected`
 * (its message, for the log), as it would have been thrown in the caller's thread.
 */
export type ThreadInput = { type: ExtractableType; data: Uint8Array; limits: ExtractLimits };
export type ThreadAnswer = { text: string } | { reason: FailureReason; message: string } | { unexpected: string };

const { type, data, limits } = workerData as ThreadInput;
let answer: ThreadAnswer;
try {
  answer = { text: await extractText(type, Buffer.from(data.buffer, data.byteOffset, data.byteLength), limits) };
} catch (error) {
  answer =
    error instanceof ExtractionError
      ? { reason: error.reason, message: error.message }
      : { unexpected: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}
parentPort!.postMessage(answer);
