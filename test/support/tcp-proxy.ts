import net from 'node:net';

/** Swallows whatever arrives on a silenced socket. */
const drop = () => {};

/**
 * A TCP proxy in front of the real PostgreSQL that a test can cut and restore, to play a database
 * outage (or a network cut) without touching the server other tests use.
 *
 * `cut()` destroys every open connection on both sides and, until `restore()`, accepts new
 * connections only to destroy them at once (the client sees "Connection terminated unexpectedly").
 * `blackhole()` closes nothing and answers nothing: see there.
 * It counts the connections it holds to PostgreSQL at every moment, and the highest count seen.
 */
export class TcpProxy {
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  /** Connections accepted during a blackhole: never passed on, never answered, kept open. */
  private readonly swallowed = new Set<net.Socket>();
  private cutOff = false;
  private blackholed = false;
  private greetingOnly = false;
  /** Connections to PostgreSQL open right now. */
  upstreamOpen = 0;
  /** The highest `upstreamOpen` since the last `resetPeak()`. */
  peakUpstream = 0;
  /** Connection attempts refused while cut. */
  refused = 0;
  /** Connections passed on to PostgreSQL since the start. */
  accepted = 0;
  /** Connections accepted and never answered during blackholes. */
  swallowedTotal = 0;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.accept(client, targetHost, targetPort));
    return proxy;
  }

  private accept(client: net.Socket, host: string, port: number): void {
    client.on('error', () => {});
    if (this.cutOff) {
      this.refused += 1;
      client.destroy();
      return;
    }
    if (this.blackholed) {
      this.swallowedTotal += 1;
      this.swallowed.add(client);
      client.on('data', drop);
      client.on('close', () => this.swallowed.delete(client));
      return;
    }
    const upstream = net.connect({ host, port });
    upstream.on('error', () => {});
    this.accepted += 1;
    const pair = { client, upstream };
    this.pairs.add(pair);
    this.upstreamOpen += 1;
    this.peakUpstream = Math.max(this.peakUpstream, this.upstreamOpen);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.pairs.delete(pair);
      this.upstreamOpen -= 1;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', close);
    upstream.on('close', close);
    client.pipe(upstream);
    if (!this.greetingOnly) {
      upstream.pipe(client);
      return;
    }
    // The server's first byte, then nothing: the connection never finishes starting.
    upstream.once('data', (chunk: Buffer) => {
      client.write(chunk.subarray(0, 1));
      upstream.on('data', drop);
    });
  }

  /**
   * New connections reach PostgreSQL and get the first byte of its answer, then nothing more, as
   * from a database too busy to finish starting a connection in time. Open connections work.
   * Such a connection stays stuck; `restore()` ends the mode for new ones.
   */
  greetOnly(): void {
    this.greetingOnly = true;
  }

  /**
   * Open connections go silent: nothing more is passed in either direction and nothing is closed,
   * as when a NAT or firewall drops a connection without telling either end. New connections work.
   */
  freeze(): void {
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /**
   * PostgreSQL goes silent, as when a firewall starts dropping its packets: every byte in either
   * direction is dropped and no connection is closed. New connections are accepted (TCP completes)
   * and never answered. The open connections stay silent for good, also after `restore()` (the
   * bytes they lost cannot be replayed): the client has to notice and drop them itself. After
   * `restore()`, new connections reach PostgreSQL again.
   */
  blackhole(): void {
    this.blackholed = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      for (const socket of [client, upstream]) {
        socket.on('data', drop);
        socket.resume();
      }
    }
  }

  /** Drops every connection and refuses new ones until `restore()`. */
  cut(): void {
    this.cutOff = true;
    for (const { client, upstream } of [...this.pairs]) {
      client.destroy();
      upstream.destroy();
    }
    for (const socket of [...this.swallowed]) socket.destroy();
  }

  /** Ends a cut, a blackhole or `greetOnly`: new connections reach PostgreSQL again. */
  restore(): void {
    this.cutOff = false;
    this.blackholed = false;
    this.greetingOnly = false;
  }

  resetPeak(): void {
    this.peakUpstream = this.upstreamOpen;
  }

  /** `url` with its host and port replaced by this proxy's. */
  urlFor(url: string, applicationName?: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    if (applicationName) proxied.searchParams.set('application_name', applicationName);
    return proxied.toString();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
