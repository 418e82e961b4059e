/**
 * An answer made while it is sent: exports that grow with the data. A service returns it; the
 * router sends it (`sendStreamed` in src/http/streamed-body.ts).
 */
export type StreamedBody = {
  /** The body in pieces of bounded size, pulled one at a time. Returning it early ends the work. */
  chunks: AsyncGenerator<string>;
  /** Frees what the body holds (idempotent); the chunks do it when they end. */
  close: () => void;
};
