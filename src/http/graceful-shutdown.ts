import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { stopAccepting } from '../platform/node.js';

type Entry<T> = { item: T; prev: Entry<T> | undefined; next: Entry<T> | undefined };

/**
 * The responses in flight, as a linked list. With a Set that gained and lost an entry on every
 * request, V8 moved each response, and everything hung on it during the request, to the old
 * generation instead of freeing it in a young-generation collection (most of what an
 * agent read that waits for the database allocates), to be freed only by full collections. With the list it
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

/** How long a keep-alive connection idle at the drain may stay open to carry one more request. */
export const DRAIN_IDLE_GRACE_MS = 1000;

/**
 * Lets a server finish its requests on shutdown, within a deadline. Install it right after the
 * server is created; call `drain` on SIGTERM.
 */
export class GracefulShutdown {
  private readonly inFlight = new InFlight<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  /** While draining: each open connection with no request in flight, and since when it has none. */
  private readonly idleSince = new Map<Socket, number>();
  private draining = false;

  constructor(
    private readonly server: Server,
    private readonly idleGraceMs = DRAIN_IDLE_GRACE_MS,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.idleSince.delete(socket);
      });
    });
    // First listener: marks each response of a draining server before the app writes anything.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const entry = this.inFlight.add(res);
      res.once('close', () => {
        this.inFlight.remove(entry);
        if (this.draining && !req.socket.destroyed) this.idleSince.set(req.socket, Date.now());
      });
      if (this.draining) {
        res.setHeader('Connection', 'close');
        this.idleSince.delete(req.socket);
      }
    });
  }

  /**
   * Stops accepting connections and answers every in-flight and later request on an open
   * connection with `Connection: close`, so keep-alive clients go away after their answer. A
   * keep-alive connection with nothing in flight is not cut at once (a client may be sending its
   * next request on it that very moment, and would get ECONNRESET): it stays open for
   * `idleGraceMs` to carry one more request, answered with `Connection: close`, and is closed
   * when it stayed idle that long. At `timeoutMs` whatever is still open is cut. Resolves when
   * every connection is closed.
   */
  drain(timeoutMs: number): Promise<{ forced: boolean }> {
    this.draining = true;
    const now = Date.now();
    const busy = new Set<Socket | null>();
    for (const res of this.inFlight) {
      busy.add(res.socket);
      if (!res.headersSent) res.setHeader('Connection', 'close');
    }
    for (const socket of this.sockets) if (!busy.has(socket)) this.idleSince.set(socket, now);
    // Not server.close(), which also cuts every idle keep-alive connection at once.
    const closed = new Promise<void>((resolve) => stopAccepting(this.server, resolve));
    const grace = Math.min(this.idleGraceMs, Math.floor(timeoutMs / 2));
    const sweep = setInterval(
      () => {
        const cutoff = Date.now() - grace;
        for (const [socket, since] of this.idleSince) if (since <= cutoff) socket.destroy();
      },
      Math.max(10, Math.floor(grace / 5)),
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), timeoutMs);
    });
    return Promise.race([closed.then(() => 'closed' as const), deadline]).then(async (outcome) => {
      clearTimeout(timer);
      clearInterval(sweep);
      if (outcome === 'closed') return { forced: false };
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
      await closed;
      return { forced: true };
    });
  }
}
