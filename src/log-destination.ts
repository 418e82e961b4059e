import { openSync, writeSync } from 'node:fs';

/** Lines kept while the destination refuses them (a full pipe); beyond this, lines are dropped and counted. */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;
/** How long a line may wait for the ones after it; also how long a full pipe is given before the next try. */
const LINGER_MS = 10;
/** Written at once when this much is pending. */
const BATCH_CHARS = 64 * 1024;

/**
 * The log's destination: lines are collected and written together, in one `write` system call, at
 * most LINGER_MS after the first of them (or at once when BATCH_CHARS are waiting). A request line
 * costs a string append, no system call and no thread-pool round trip of its own: pino's
 * asynchronous destination hands every write to libuv's thread pool, which cost a noticeable share
 * of a request's CPU on Node 24 (`npm run bench -- chain`). When the destination is a full non-blocking pipe
 * (EAGAIN), the rest waits and is tried again LINGER_MS later without holding up requests; past
 * `maxPendingChars` waiting, new lines are dropped and counted, and a line saying how many follows
 * once the pipe drains. Any other write error (the reader has gone: EPIPE) loses the lines of that
 * write. A blocking destination (a file, a blocking pipe) is waited for once per batch, as pino's
 * synchronous destination waits once per line. On exit whatever is pending is written.
 */
export class LogDestination {
  private pending = '';
  /** The bytes a partial or refused write left, written before anything pending. */
  private unwritten: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private readonly fd: number;

  constructor(
    destination: number | string,
    private readonly maxPendingChars = MAX_PENDING_CHARS,
  ) {
    this.fd = typeof destination === 'number' ? destination : openSync(destination, 'a');
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.pending.length + line.length > this.maxPendingChars) {
      this.dropped++;
      return false;
    }
    this.pending += line;
    if (this.pending.length >= BATCH_CHARS && this.unwritten === undefined) this.flushSync();
    else this.timer ??= setTimeout(this.drain, LINGER_MS).unref();
    return true;
  }

  /** pino's `logger.flush(cb)`: everything pending, now. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  /** Writes everything now; what a full pipe refuses is tried again LINGER_MS later. */
  flushSync(): void {
    clearTimeout(this.timer);
    this.timer = this.writePending() ? undefined : setTimeout(this.drain, LINGER_MS).unref();
  }

  private readonly drain = (): void => this.flushSync();

  /** Writes what is pending; false when the destination is full (EAGAIN) and some is left. */
  private writePending(): boolean {
    for (;;) {
      if (this.unwritten === undefined) {
        if (this.dropped > 0) {
          const note = { level: 40, time: Date.now(), msg: `log destination was full: ${this.dropped} lines dropped` };
          this.pending += `${JSON.stringify(note)}\n`;
          this.dropped = 0;
        }
        if (this.pending.length === 0) return true;
        // Bytes, not characters: a partial write may end inside a character, and the rest goes next.
        this.unwritten = Buffer.from(this.pending);
        this.pending = '';
      }
      try {
        const written = writeSync(this.fd, this.unwritten);
        this.unwritten = written === this.unwritten.length ? undefined : this.unwritten.subarray(written);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return false;
        // The reader has gone (EPIPE) or the file cannot be written: these lines are lost.
        this.unwritten = undefined;
        this.pending = '';
        return true;
      }
    }
  }
}
