import type { Logger } from 'pino';
import type { KeyUse } from './credentials.repository.js';

/** How long a use waits for the next batch: short next to the minute resolution of `last_used_at`. */
export const LAST_USED_FLUSH_MS = 5000;

/**
 * Collects the keys whose `last_used_at` is due (authentication decides that, at most once a minute
 * per key) and writes them in one statement every few seconds, and once more on shutdown. A failed
 * write is logged and dropped: the value is bookkeeping, and no request waits for it or fails
 * because of it (during a database outage the pending uses are simply lost).
 */
export class LastUsedRecorder {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly write: (uses: KeyUse[]) => Promise<void>,
    private readonly logger: Logger,
    private readonly flushMs = LAST_USED_FLUSH_MS,
  ) {}

  /** Records a use; the write follows within `flushMs`. Never throws, never waits. */
  record(id: string, at: Date): void {
    if (this.closed) return;
    this.pending.set(id, at);
    if (this.pending.size > 100_000) {
      void this.flush();
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      // A pending bookkeeping write never keeps a process alive.
      this.timer.unref();
    }
  }

  /** Writes every pending use now (tests, shutdown); resolves when the write is done or has failed. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const uses = [...this.pending].map(([id, at]) => ({ id, at }));
    this.pending = new Map();
    try {
      await this.write(uses);
    } catch (error) {
      this.logger.warn({ err: error, keys: uses.length }, 'last_used_at update failed; dropped');
    }
  }

  /** The last flush, after requests have drained; later uses are not recorded. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}
