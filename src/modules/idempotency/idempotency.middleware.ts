import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { underPathPrefix } from '../../http/path-prefix.js';
import type { IdempotencyService } from './idempotency.service.js';

/** The methods a retry could repeat a side effect of. */
export const IDEMPOTENT_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Headers that say what the answer was, so its replay says the same (a dry run stays a dry run). */
const KEPT_HEADERS = ['Dry-Run', 'Test-Cases-Failed'] as const;

function keptHeaders(res: Response): Record<string, string> | null {
  let kept: Record<string, string> | null = null;
  for (const name of KEPT_HEADERS) {
    const value = res.get(name);
    if (value !== undefined) (kept ??= {})[name] = value;
  }
  return kept;
}

function bodyText(chunk: unknown): string | null {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return null;
  return Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
}

/**
 * `Idempotency-Key` for every POST, PUT and PATCH behind it (after authentication and body parsing):
 * without the header nothing changes; with it, the response is kept before it is sent, and a repeat
 * is answered from the record (`Idempotent-Replayed: true`) without reaching the route.
 */
export function idempotency(
  service: IdempotencyService,
  logger: Logger,
  /** Path prefixes (`/v1/api-keys`) that take no key: the header is ignored there. */
  excluded: readonly string[] = [],
): RequestHandler {
  const isExcluded = (url: string) => excluded.some((p) => underPathPrefix(p, url));
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.get(IDEMPOTENCY_HEADER);
    if (
      header === undefined ||
      !(IDEMPOTENT_METHODS as readonly string[]).includes(req.method) ||
      !req.auth ||
      isExcluded(req.originalUrl)
    )
      return next();
    const begun = await service.begin(req.auth, header, { method: req.method, path: req.originalUrl, body: req.body });
    if (begun.kind === 'replay') {
      const { status, contentType, location, body, headers } = begun.response;
      res.status(status).set(REPLAYED_HEADER, 'true');
      if (headers) res.set(headers);
      if (contentType) res.set('Content-Type', contentType);
      if (location) res.set('Location', location);
      res.end(body ?? undefined);
      return;
    }
    // The response is recorded before its first byte leaves, so a retry after it never runs again.
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let recorded = false;
    res.end = ((...args: unknown[]) => {
      if (recorded) return end(...args);
      recorded = true;
      service
        .finish(begun.claim, {
          status: res.statusCode,
          contentType: res.get('Content-Type') ?? null,
          location: res.get('Location') ?? null,
          body: bodyText(args[0]),
          headers: keptHeaders(res),
        })
        .catch((error) => logger.warn({ err: error }, 'idempotency record not completed'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}
