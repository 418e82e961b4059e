import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Entry<T> = { item: T; prev: Entry<T> | undefined; next: Entry<T> | undefined };

/**
 * The responses in flight, as a linked list. With a Set that gained and lost an entry on every
 * request, V8 moved each response, and everything hung on it during the request, to the old
 * generation instead of freeing it in a young-generation collection (about 14 kB a request on an
 * agent read that waits for the database), to be freed only by full collections. With the list it
 * does not (docs/performance.md, "In-flight responses").
 */
export class InFlight<T> {
  private head: Entry<T> | undefined;

  add(item: T): Entry<T> {
    const entry: Entry<T> = { item, prev: undefined, next: this.head };
    if (this.head) this.head.prev = entry;
    this.head = entry;
    return entry;
  }

  remove(entry: Entry<T>): void {
    if (entry.prev) entry.prev.next = entry.next;
    else if (this.head === entry) this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    entry.prev = entry.next = undefined;
  }

  *[Symbol.iterator](): Generator<T> {
    for (let entry = this.head; entry; entry = entry.next) yield entry.item;
  }
}

/**
 * Lets a server finish its requests on shutdown, within a deadline. Install it right after the
 * server is created; call `drain` on SIGTERM.
 */
export class GracefulShutdown {
  private readonly inFlight = new InFlight<ServerResponse>();
  private draining = false;

  constructor(private readonly server: Server) {
    // First listener: marks each response of a draining server before the app writes anything.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      const entry = this.inFlight.add(res);
      res.once('close', () => this.inFlight.remove(entry));
      if (this.draining) res.setHeader('Connection', 'close');
    });
  }

  /**
   * Stops accepting connections, answers every in-flight and later request on an open connection
   * with `Connection: close` (so keep-alive clients go away after their answer), closes idle
   * keep-alive connections at once, and at `timeoutMs` cuts whatever is still open. Resolves
   * when every connection is closed.
   */
  drain(timeoutMs: number): Promise<{ forced: boolean }> {
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), timeoutMs);
    });
    return Promise.race([closed.then(() => 'closed' as const), deadline]).then(async (outcome) => {
      clearTimeout(timer);
      if (outcome === 'closed') return { forced: false };
      this.server.closeAllConnections();
      await closed;
      return { forced: true };
    });
  }
}
