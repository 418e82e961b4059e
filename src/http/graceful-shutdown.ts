import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Lets a server finish its requests on shutdown, within a deadline. Install it right after the
 * server is created; call `drain` on SIGTERM.
 */
export class GracefulShutdown {
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;

  constructor(private readonly server: Server) {
    // First listener: marks each response of a draining server before the app writes anything.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
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
