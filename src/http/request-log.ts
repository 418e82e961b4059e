import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { apiKeyPrefix } from '../auth/api-key-format.js';
import { writeLine } from '../platform/pino.js';

/** Organization ids written per line; a key reaching more is cut here (the count stays). */
const MAX_LOGGED_ORGANIZATIONS = 10;

/** When the request reached the log middleware (`Date.now()`), kept on the response. */
const STARTED = Symbol('request-log.started');
type TimedResponse = Response & { [STARTED]: number };

export type LoggedRequest = { id: string; method: string; path: string; query_keys?: string[] };

/**
 * The request as logged: id, method, the path without its query string, and the query's parameter
 * names (never their values). Also the `req` of the error handler's lines.
 */
export function loggedRequest(req: Request): LoggedRequest {
  const url = req.originalUrl ?? req.url;
  const at = url.indexOf('?');
  if (at === -1) return { id: req.requestId, method: req.method, path: url };
  const keys = [...new Set(new URLSearchParams(url.slice(at + 1)).keys())].slice(0, 20);
  return { id: req.requestId, method: req.method, path: url.slice(0, at), query_keys: keys };
}

type Line = {
  req: LoggedRequest;
  res: { statusCode: number };
  err?: { type: string; message: string };
  responseTime: number;
  route: string | null;
  auth_kind?: string;
  user_id?: string;
  api_key_id?: string;
  key_prefix?: string;
  organization_ids?: string[];
  organization_count?: number;
};

/** The caller, as far as authentication found out: key prefix or user, organizations. */
function addCaller(req: Request, line: Line): void {
  const auth = req.auth;
  if (!auth) return;
  line.auth_kind = auth.kind;
  line.user_id = auth.userId;
  if (auth.apiKeyId) line.api_key_id = auth.apiKeyId;
  const raw = req.headers['x-api-key'];
  if (auth.kind === 'api_key' && typeof raw === 'string') line.key_prefix = apiKeyPrefix(raw);
  const count = auth.organizations.size;
  const ids: string[] = [];
  for (const id of auth.organizations.keys()) {
    if (ids.length === MAX_LOGGED_ORGANIZATIONS) break;
    ids.push(id);
  }
  line.organization_ids = ids;
  if (count > MAX_LOGGED_ORGANIZATIONS) line.organization_count = count;
}

/**
 * One line per request when its response is closed (sent, or the client went away): method, path
 * (no query values), route template, status, duration (`responseTime`, ms), request id, and the
 * caller (key prefix or user id, organization ids). No headers and no bodies. 5xx answers are
 * logged at `error` (503, the database being away, at `warn`: the error handler logs it once more)
 * as "request errored".
 *
 * Built cheaply, as it runs for every request: one listener function shared by all responses (no
 * closure, no child logger), the fields read only when the line is written and only when its level
 * is enabled, one plain object written as pino would write it, in one `JSON.stringify`
 * (`writeLine`). pino-http's child loggers per request cost a third of a request's CPU on
 * Node 24, and pino's own walk over the fields with its redaction half of what remained
 * (`npm run bench -- chain`, docs/performance.md).
 */
export function requestLog(logger: Logger): RequestHandler {
  function closed(this: TimedResponse): void {
    const status = this.statusCode;
    const level = status === 503 ? 'warn' : status >= 500 ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const req = this.req;
    const line: Line =
      status >= 500
        ? {
            req: loggedRequest(req),
            res: { statusCode: status },
            err: { type: 'Error', message: `failed with status code ${status}` },
            responseTime: Date.now() - this[STARTED],
            route: req.routeTemplate?.path ?? null,
          }
        : {
            req: loggedRequest(req),
            res: { statusCode: status },
            responseTime: Date.now() - this[STARTED],
            route: req.routeTemplate?.path ?? null,
          };
    addCaller(req, line);
    const message = status >= 500 ? 'request errored' : this.writableFinished ? 'request completed' : 'request aborted';
    writeLine(logger, level, line, message);
  }
  return (_req, res, next) => {
    (res as TimedResponse)[STARTED] = Date.now();
    // A response emits 'close' once, after 'finish' or when the client went away.
    res.on('close', closed);
    next();
  };
}
