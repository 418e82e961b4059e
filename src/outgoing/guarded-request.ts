import { promises as dns } from 'node:dns';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { http } from '../platform/node.js';
import { classifyAddress, ipv4InIpv6Form, isAlwaysForbidden, normalizeHost, outgoingUrlProblem } from './url-policy.js';

/**
 * The one outgoing-request guard, shared by webhooks and http_request tools. The address a name
 * resolves to is checked inside the socket's own `lookup`, so the address that was checked is the
 * address that is connected to (no second resolution a DNS rebinding could slip between).
 */

export type ResolvedAddress = { address: string; family: number };
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export type GuardOptions = {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: lifts the address checks (local development and tests only). */
  allowPrivate: boolean;
  /** Limit for the whole request: connect, send, status and body. */
  timeoutMs: number;
  /** Bytes of the response body that are read; the rest is cut off (`truncated: true`). */
  maxResponseBytes?: number;
  /** Name resolution; the system resolver unless a test supplies its own answers. */
  resolve?: Resolver;
};

export type OutgoingRequest = {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
};

export type OutgoingResponse = {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  durationMs: number;
};

export type OutgoingFailure = 'refused' | 'timeout' | 'network';

/** A request that got no HTTP answer: refused by the guard, timed out, or failed on the network. */
export class OutgoingRequestError extends Error {
  constructor(
    readonly reason: OutgoingFailure,
    message: string,
    readonly durationMs = 0,
  ) {
    super(message);
    this.name = 'OutgoingRequestError';
  }
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Why a connection to `address` is refused, or null. Only public unicast addresses pass (see
 * url-policy.ts); IPv4-mapped and IPv4-compatible IPv6 forms are always refused.
 */
export function addressProblem(address: string): string | null {
  const form = ipv4InIpv6Form(address);
  if (form) return `${form} IPv6 address ${address} is not allowed`;
  const verdict = classifyAddress(address);
  return verdict.allowed ? null : `Address ${verdict.reason}`;
}

/** The socket's lookup: resolve, refuse the whole answer if any address is refused, else hand it on. */
function guardedLookup(resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((answers) => {
        const wanted =
          options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
        if (wanted.length === 0)
          throw Object.assign(new Error(`No address found for ${hostname}`), { code: 'ENOTFOUND' });
        const refused = wanted
          .map((a) =>
            isAlwaysForbidden(a.address)
              ? `Address ${a.address} is never allowed`
              : allowPrivate
                ? null
                : addressProblem(a.address),
          )
          .find((p) => p !== null);
        if (refused)
          throw new OutgoingRequestError(
            'refused',
            `Refused: ${hostname} resolves to a forbidden address (${refused})`,
          );
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/** The checks that need no network: scheme, credentials, local names, address literals. */
function checkTarget(raw: string, allowPrivate: boolean): URL {
  const problem = outgoingUrlProblem(raw, { allowPrivate });
  if (problem) throw new OutgoingRequestError('refused', `Refused: ${problem}`);
  const url = new URL(raw);
  const host = normalizeHost(url.hostname);
  // The socket skips `lookup` for an address literal, so a literal is checked here.
  const literalProblem = !isIP(host)
    ? null
    : isAlwaysForbidden(host)
      ? `Address ${host} is never allowed`
      : allowPrivate
        ? null
        : addressProblem(host);
  if (literalProblem) throw new OutgoingRequestError('refused', `Refused: ${literalProblem}`);
  return url;
}

/**
 * Sends one request through the guard. Resolves with any HTTP answer (3xx included: redirects are
 * never followed); rejects with OutgoingRequestError when there is no answer.
 */
export async function guardedRequest(request: OutgoingRequest, options: GuardOptions): Promise<OutgoingResponse> {
  const url = checkTarget(request.url, options.allowPrivate);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const transport = url.protocol === 'https:' ? https : http;

  return new Promise<OutgoingResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, response?: Omit<OutgoingResponse, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(toOutgoingError(error, elapsed()));
      else resolve({ ...response!, durationMs: elapsed() });
    };
    const req = transport.request(url, {
      method: request.method ?? 'GET',
      headers: request.headers,
      agent: false,
      lookup: guardedLookup(options.resolve ?? systemResolver, options.allowPrivate),
    });
    const timer = setTimeout(() => {
      const error = new OutgoingRequestError('timeout', `Timed out after ${options.timeoutMs} ms`);
      finish(error);
      req.destroy(error);
    }, options.timeoutMs);
    req.on('error', (error) => finish(error));
    req.on('response', (res) => readBounded(res, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, finish));
    req.end(request.body);
  });
}

/** Reads at most `limit` bytes of the body, then stops reading and closes the connection. */
function readBounded(
  res: IncomingMessage,
  limit: number,
  finish: (error: Error | null, response?: Omit<OutgoingResponse, 'durationMs'>) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const done = (truncated: boolean) =>
    finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk.subarray(0, Math.max(limit - size, 0)));
    size += chunk.length;
    if (size > limit) {
      done(true);
      res.destroy();
    }
  });
  res.on('end', () => done(false));
  res.on('error', (error) => finish(error));
}

function toOutgoingError(error: Error, durationMs: number): OutgoingRequestError {
  if (error instanceof OutgoingRequestError) return new OutgoingRequestError(error.reason, error.message, durationMs);
  return new OutgoingRequestError('network', error.message || 'Request failed', durationMs);
}

/** The guard as the configuration sets it up. */
export function guardOptionsFromConfig(config: {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
  WEBHOOK_TIMEOUT_MS: number;
}): GuardOptions {
  return { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, timeoutMs: config.WEBHOOK_TIMEOUT_MS };
}
