import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { StreamedBody } from '../api/streamed-body.js';

/** `first` (already pulled) and then the rest of the chunks. */
async function* resume(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

/**
 * Sends `body` with status 200 and `headers`, with backpressure: the next piece is made only when
 * the socket has taken the one before (at most one waits), and a client that goes away ends the
 * chunks, which frees what they hold. The first piece is made before the headers, so a failure
 * there is still an ordinary error answer; after that only a cut connection can tell the client,
 * and the log says why.
 */
export async function sendStreamed(res: Response, body: StreamedBody, headers: Record<string, string>): Promise<void> {
  const first = await body.chunks.next().catch((error: unknown) => {
    body.close();
    throw error;
  });
  res.status(200).set(headers);
  try {
    await pipeline(Readable.from(resume(first, body.chunks), { highWaterMark: 1 }), res);
  } catch (error) {
    if (!res.destroyed) res.destroy(error as Error);
  } finally {
    // The chunks free it when they end; this covers a client gone before the first of them.
    body.close();
  }
}
