import type { Request } from 'express';
import type { Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { apiKeyPrefix } from '../auth/api-key-format.js';

/** Organization ids written per line; a key reaching more is cut here (the count stays). */
const MAX_LOGGED_ORGANIZATIONS = 10;

type RawRequest = { id: string; method: string; originalUrl?: string; url: string };

/**
 * The request as logged: id, method, the path without its query string, and the query's parameter
 * names (never their values).
 */
function loggedRequest(req: RawRequest): Record<string, unknown> {
  const url = req.originalUrl ?? req.url;
  const at = url.indexOf('?');
  if (at === -1) return { id: req.id, method: req.method, path: url };
  const keys = [...new Set(new URLSearchParams(url.slice(at + 1)).keys())].slice(0, 20);
  return { id: req.id, method: req.method, path: url.slice(0, at), query_keys: keys };
}

/**
 * Adds the route template (matched on arrival) and the caller, as far as authentication found out
 * (key prefix or user, organizations), to the finished line. Assigned one by one onto pino-http's
 * own object: spreading it and a conditional object per field cost more than the line's
 * serialization (the request path's busiest product function in a CPU profile).
 */
function addLineProps(req: Request, line: Record<string, unknown>): object {
  line.route = req.routeTemplate?.path ?? null;
  const auth = req.auth;
  if (!auth) return line;
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
  return line;
}

/**
 * One line per request when it finishes: method, path (no query values), route template, status,
 * duration (`responseTime`, ms), request id, and the caller (key prefix or user id, organization
 * ids). No headers and no bodies.
 */
export function requestLog(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: (req) => (req as Request).requestId,
    wrapSerializers: false,
    // 503 is the database being away (expected during an outage, logged once more by the error handler).
    customLogLevel: (_req, res, error) => {
      if (res.statusCode === 503) return 'warn';
      return error || res.statusCode >= 500 ? 'error' : 'info';
    },
    // Added to the finished line itself: pino-http's customProps would build two more child loggers per request.
    customSuccessObject: (req, _res, line: Record<string, unknown>) => addLineProps(req as Request, line),
    customErrorObject: (req, _res, _error, line: Record<string, unknown>) => addLineProps(req as Request, line),
    serializers: {
      req: loggedRequest,
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
