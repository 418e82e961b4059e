import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

/*
 * The address a request comes from, as a key's allow-list sees it: express's `req.ip`, which is the
 * socket's address or, where TRUST_PROXY names the proxies in front, the right-most
 * `X-Forwarded-For` entry that is not one of them (app.ts sets 'trust proxy').
 *
 * A tool call of the MCP server is a request of this process to itself (src/modules/mcp): its socket
 * address is this server's own. It carries the address of the MCP request it serves instead, vouched
 * for by a secret that only this process knows and that never leaves the host.
 */
const INTERNAL_SECRET = randomBytes(32);
const ADDRESS_HEADER = 'x-vam-client-address';
const SECRET_HEADER = 'x-vam-internal';

function vouched(value: string): boolean {
  const given = Buffer.from(value, 'hex');
  return given.length === INTERNAL_SECRET.length && timingSafeEqual(given, INTERNAL_SECRET);
}

/** A request this process sent itself (an MCP tool call), vouched for by the secret. */
export function isInternalRequest(req: Request): boolean {
  const secret = req.headers[SECRET_HEADER];
  return typeof secret === 'string' && vouched(secret);
}

export function clientAddress(req: Request): string | undefined {
  const secret = req.headers[SECRET_HEADER];
  const forwarded = req.headers[ADDRESS_HEADER];
  if (typeof secret === 'string' && typeof forwarded === 'string' && vouched(secret)) return forwarded;
  return req.ip;
}

/** For a request this process sends itself on behalf of `req`: `req`'s client address, vouched for. */
export function internalClientHeaders(req: Request): Record<string, string> {
  const address = clientAddress(req);
  return address ? { [ADDRESS_HEADER]: address, [SECRET_HEADER]: INTERNAL_SECRET.toString('hex') } : {};
}
