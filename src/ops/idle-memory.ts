import type { Server } from 'node:http';
import type { Logger } from 'pino';

/** How long without a request counts as idle. */
export const IDLE_MS = 30_000;
/** How often that is checked. */
const CHECK_MS = 5000;

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/** A synchronous collection, as Node's `gc` (with `--expose-gc`) runs one. */
export type Collector = (options: NodeJS.GCOptions & { execution: 'sync' }) => void;

/**
 * Gives the memory of a busy spell back to the operating system once the instance falls idle.
 *
 * V8 keeps the heap pages a collection frees in a pool for the next allocations: on Node 24 an
 * instance that served a burst holds its peak resident size (`npm run bench -- memory` shows it)
 * however long it then waits, although its heap is a third of that. Only a memory-reducing full
 * collection (`gc({ flavor: 'last-resort' })`) returns the pool; Node offers it only with
 * `--expose-gc`, which `npm run start:prod` and the image pass. Without that flag this does nothing.
 *
 * Once per idle spell, and once after the start: when no request has arrived for IDLE_MS (checked
 * every 5 s), one collection runs (tens of milliseconds on a quiet instance; a request arriving
 * meanwhile waits for it), logged at debug with the sizes. Not sooner: the collection also drops
 * what the busy instance had grown into (young generation, compiled code, pooled pages), and the
 * first seconds of the next burst pay for growing it again (more CPU per request in the rounds
 * right after a collection than in those before it), so a lull between bursts is not idle.
 */
export class IdleMemoryTrim {
  private requests = 0;
  private seen = 0;
  /** When a check last found requests that arrived since the one before (performance.now()). */
  private busyAt = Number.NEGATIVE_INFINITY;
  private trimmed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly count = () => {
    this.requests++;
  };

  constructor(
    private readonly server: Server,
    private readonly logger: Logger,
    private readonly collect: Collector | undefined = globalThis.gc,
    private readonly idleMs = IDLE_MS,
    private readonly checkMs = CHECK_MS,
  ) {}

  start(): void {
    if (!this.collect || this.timer) return;
    this.server.on('request', this.count);
    this.timer = setInterval(() => this.check(), this.checkMs).unref();
    // The start's own garbage (modules loaded, migrations checked, the OpenAPI document built) first.
    setImmediate(() => this.check());
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.server.off('request', this.count);
  }

  /** One check; true when it collected. */
  check(now = performance.now()): boolean {
    if (this.requests !== this.seen) {
      this.seen = this.requests;
      this.busyAt = now;
      this.trimmed = false;
      return false;
    }
    if (this.trimmed || !this.collect || now - this.busyAt < this.idleMs) return false;
    this.trimmed = true;
    const before = process.memoryUsage.rss();
    const started = performance.now();
    this.collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    this.logger.debug(
      {
        rss_mb_before: mb(before),
        rss_mb_after: mb(process.memoryUsage.rss()),
        duration_ms: Math.round(performance.now() - started),
      },
      'idle: heap collected and returned to the operating system',
    );
    return true;
  }
}
