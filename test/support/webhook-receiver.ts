import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export type ReceivedRequest = { path: string; method: string; headers: IncomingHttpHeaders; body: string };

/**
 * A real HTTP receiver on 127.0.0.1 (port 0). The first path segment picks the behaviour:
 * /ok, /fail (500), /redirect (302 to /ok/...), /hang (never answers), /big (1 MiB body),
 * /flaky (500 the first time, then 200).
 */
export async function startReceiver() {
  const received: ReceivedRequest[] = [];
  const waiters: { path: string; resolve: (r: ReceivedRequest) => void }[] = [];
  const seen = new Set<string>();
  const respond = (path: string, res: ServerResponse) => {
    const kind = path.split('/')[1];
    if (kind === 'hang') return;
    if (kind === 'fail') return void res.writeHead(500).end('boom');
    if (kind === 'redirect')
      return void res.writeHead(302, { Location: `/ok/after-redirect-${randomBytes(3).toString('hex')}` }).end();
    if (kind === 'big') return void res.writeHead(200).end(Buffer.alloc(1024 * 1024, 'x'));
    if (kind === 'flaky' && !seen.has(path)) {
      seen.add(path);
      return void res.writeHead(500).end();
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = {
        path: req.url ?? '',
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const waiter of waiters.filter((x) => x.path === request.path)) waiter.resolve(request);
      respond(req.url ?? '', res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    /** A URL of `kind` with a path of its own, so each test reads only its own requests. */
    url(kind: 'ok' | 'fail' | 'redirect' | 'hang' | 'big' | 'flaky', host = '127.0.0.1') {
      return `http://${host}:${port}/${kind}/${randomBytes(6).toString('hex')}`;
    },
    requestsTo(url: string): ReceivedRequest[] {
      const path = new URL(url).pathname;
      return received.filter((r) => r.path === path);
    },
    /** Resolves with the first request to `url`; rejects after `timeoutMs` (a bound, not a sleep). */
    nextRequestTo(url: string, timeoutMs = 10_000): Promise<ReceivedRequest> {
      const path = new URL(url).pathname;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`No request to ${path} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ path, resolve: (r) => (clearTimeout(timer), resolve(r)) });
      });
    },
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
