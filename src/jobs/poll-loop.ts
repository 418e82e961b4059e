export type PollLoopOptions = {
  /** When idle, how often `tick` runs. */
  intervalMs: number;
  /** After a `wake()`, how long to wait before `tick`, so that work arriving together is taken together. */
  lingerMs: number;
};

/**
 * Runs `tick` until stopped: again at once when it says more work is ready, otherwise after
 * `intervalMs`, or `lingerMs` after a `wake()` (work queued in this process). A `tick` that throws
 * is reported to `onError` and the loop goes on.
 */
export class PollLoop {
  private running = false;
  private busy = false;
  private woken = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private resolveWait: (() => void) | undefined;
  private lingering = false;

  constructor(
    private readonly tick: () => Promise<boolean>,
    private readonly options: PollLoopOptions,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the tick under way (if any). */
  async stop(): Promise<void> {
    this.running = false;
    this.endWait();
    await this.loop;
  }

  /** Waiting for the next tick (not inside one). */
  get idle(): boolean {
    return this.running && !this.busy;
  }

  /** Work is ready: tick `lingerMs` from now (or right after the tick under way) instead of at the interval. */
  wake(): void {
    this.woken = true;
    if (!this.resolveWait || this.lingering) return;
    this.lingering = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.endWait(), this.options.lingerMs);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      this.busy = true;
      let more = false;
      try {
        more = await this.tick();
      } catch (error) {
        this.onError(error);
      }
      this.busy = false;
      if (!this.running || more) continue;
      await new Promise<void>((resolve) => {
        this.resolveWait = resolve;
        this.lingering = this.woken;
        this.timer = setTimeout(() => this.endWait(), this.woken ? this.options.lingerMs : this.options.intervalMs);
      });
    }
  }

  private endWait(): void {
    clearTimeout(this.timer);
    const resolve = this.resolveWait;
    this.resolveWait = undefined;
    this.lingering = false;
    resolve?.();
  }
}
