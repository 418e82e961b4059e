import http from 'node:http';
import net from 'node:net';
import type { FuzzRequest, Kind } from './requests.js';

export type FuzzResponse = { status: number; body: string; contentType?: string };
export type FuzzFailure = { request: Omit<FuzzRequest, 'body' | 'raw'>; status: number; reason: string; body: string };

export type FuzzReport = {
  total: number;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  /** `kind status` -> count */
  byKindAndStatus: Record<string, number>;
  byOperation: Record<string, number>;
  failures: FuzzFailure[];
};

/** Answers are kept up to this size (the rest is counted, not kept). */
export const MAX_BODY = 64 * 1024;

function send(base: URL, agent: http.Agent, request: FuzzRequest): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        agent,
        headers: {
          ...request.headers,
          ...(request.body && !request.headers['Transfer-Encoding']
            ? { 'Content-Length': String(request.body.length) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_BODY) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            contentType: res.headers['content-type'],
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    // The server may answer (413, 415, 401) and close before the whole body is written.
    req.on('error', reject);
    // A chunked body goes in 1 MB pieces, as a streaming client would send it.
    if (request.body && request.headers['Transfer-Encoding']) {
      for (let at = 0; at < request.body.length; at += 1024 * 1024)
        req.write(request.body.subarray(at, at + 1024 * 1024));
    } else if (request.body) req.write(request.body);
    req.end();
  });
}

/** A raw request on its own connection; the answer is read until the server closes it. */
function sendRaw(base: URL, raw: Buffer): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(base.port), base.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(30_000, () => socket.destroy(new Error('timeout')));
    socket.on('connect', () => socket.end(raw));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => (chunks.length > 0 ? finish() : reject(error)));
    socket.on('close', () => finish());
    let done = false;
    function finish() {
      if (done) return;
      done = true;
      const text = Buffer.concat(chunks).toString('utf8');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: match ? Number(match[1]) : 0, body: split >= 0 ? text.slice(split + 4) : '' });
    }
  });
}

/** Why a response breaks the rules (>= 500, or an error without the envelope), or undefined. */
export function problemOf(response: FuzzResponse): string | undefined {
  if (response.status === 0) return 'no HTTP response';
  if (response.status >= 500) return 'server error';
  if (response.status < 400) return undefined;
  try {
    const error = (JSON.parse(response.body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string') return 'error without the envelope';
  } catch {
    return 'error body is not JSON';
  }
  return undefined;
}

/** Sends every request (`concurrency` at a time) and counts the answers. */
export async function runFuzz(
  baseUrl: string,
  requests: Iterable<FuzzRequest>,
  options: {
    concurrency?: number;
    onProgress?: (done: number) => void;
    /** A further rule for each answer (the tests hold it to the OpenAPI document); a reason fails it. */
    check?: (request: FuzzRequest, response: FuzzResponse) => string | undefined;
  } = {},
): Promise<FuzzReport> {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency ?? 8 });
  const report: FuzzReport = { total: 0, byStatus: {}, byKind: {}, byKindAndStatus: {}, byOperation: {}, failures: [] };
  const iterator = requests[Symbol.iterator]();
  const count = (map: Record<string, number>, key: string) => (map[key] = (map[key] ?? 0) + 1);

  async function worker() {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      const request = next.value;
      let response: FuzzResponse;
      try {
        response = request.raw ? await sendRaw(base, request.raw) : await send(base, agent, request);
      } catch (error) {
        response = { status: 0, body: String(error) };
      }
      report.total++;
      count(report.byStatus, String(response.status));
      count(report.byKind, request.kind satisfies Kind);
      count(report.byKindAndStatus, `${request.kind} ${response.status}`);
      count(report.byOperation, `${request.method} ${request.path.split('?')[0]}`);
      const reason = problemOf(response) ?? (response.status === 0 ? undefined : options.check?.(request, response));
      if (reason && !(response.status === 0 && expectedDrop(request))) {
        const { body: _b, raw: _r, headers, ...summary } = request;
        const shown = Object.fromEntries(
          Object.entries(headers).map(([k, v]) => [k, /authorization|api-key/i.test(k) ? `${v.slice(0, 16)}...` : v]),
        );
        report.failures.push({
          request: { ...summary, headers: shown },
          status: response.status,
          reason,
          body: response.body.slice(0, 500),
        });
      }
      options.onProgress?.(report.total);
    }
  }
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, () => worker()));
  agent.destroy();
  return report;
}

/**
 * A body over the limit is refused (413) as soon as its Content-Length is read; the client may
 * still be writing and see the connection reset instead of the answer. That is not a server fault.
 */
function expectedDrop(request: FuzzRequest): boolean {
  return (request.body?.length ?? 0) > 1_000_000;
}
