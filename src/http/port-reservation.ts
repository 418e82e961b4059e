import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { http } from '../platform/node.js';
import { SetupError } from '../setup-error.js';

/** How long a connection made while the service starts may stay open without sending a request. */
const STARTING_SOCKET_TIMEOUT_MS = 5000;

/**
 * `PORT` bound first, before the database is opened, migrations run or credentials printed: a port
 * in use stops the start before it changed anything. Until the app is attached, every request is
 * answered 503 `SERVICE_UNAVAILABLE` with `Retry-After: 1` and `Connection: close`; `attach` hands the
 * listening socket itself to the product's server (`server.listen(handle)`), so no connection is
 * refused between the two.
 */
export class PortReservation {
  private attached = false;

  private constructor(private readonly listener: NetServer) {}

  /** Listens on `host`:`port` (0: any free port); a port in use is a SetupError naming PORT. */
  static async reserve(port: number, host: string): Promise<PortReservation> {
    const starting = http.createServer((req, res) => {
      const requestId = randomUUID();
      const body = JSON.stringify({
        error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is starting', request_id: requestId },
      });
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Retry-After': '1',
        'X-Request-Id': requestId,
        Connection: 'close',
      });
      res.end(body);
    });
    starting.on('clientError', (_error, socket) => socket.destroy());
    const listener = createNetServer((socket) => {
      socket.setTimeout(STARTING_SOCKET_TIMEOUT_MS, () => socket.destroy());
      starting.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', (error: NodeJS.ErrnoException) => reject(portError(error, port, host)));
      listener.listen(port, host, () => resolve());
    });
    return new PortReservation(listener);
  }

  /** The port bound (the one chosen when `PORT` was 0). */
  get port(): number {
    return (this.listener.address() as AddressInfo).port;
  }

  /** Hands the listening socket to `server`: from now on it accepts the connections. */
  attach(server: Server): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listener, () => {
        this.attached = true;
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** Gives the port back (a start that failed after reserving it). */
  close(): Promise<void> {
    if (this.attached) return Promise.resolve(); // the server owns the socket now
    return new Promise((resolve) => this.listener.close(() => resolve()));
  }
}

function portError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE') {
    return new SetupError(
      `PORT ${port} is already in use on ${host}`,
      'stop the program that listens there (another instance of this server?) or set PORT to a free port',
      error,
    );
  }
  if (error.code === 'EACCES') {
    return new SetupError(
      `not allowed to listen on PORT ${port}`,
      'use a port above 1023 (PORT=3000) or grant the permission to bind it',
      error,
    );
  }
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
    return new SetupError(
      `HOST ${host} is not an address of this machine`,
      'set HOST to 0.0.0.0, 127.0.0.1 or one of its addresses',
      error,
    );
  }
  return error;
}
