import '../http/types.js';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type IncrementResponse, type Store } from 'express-rate-limit';
import type { Clock } from '../clock.js';
import { RateLimitedError } from '../errors/index.js';
import { isInternalRequest } from './client-address.js';
import { minuteResetAt, type RateLimitStore } from './rate-limit-store.js';

/*
 * express-rate-limit drives the request; our store decides. The key carries the key's budget id (its
 * own id, or the first key of its rotation chain, so old and new key share the counters during the
 * overlap) and its current limits (read from the key row on this very request), so a PATCH of the limits applies at
 * once and the store needs no other lookup. express-rate-limit only knows one window, so a refusal
 * reports `limit + 1` hits for the minute window and `limit + 2` for the hour window.
 */
function encodeKey(budgetId: string, perMinute: number, perHour: number): string {
  return `${budgetId}|${perMinute}|${perHour}`;
}

class TwoWindowStore implements Store {
  readonly localKeys = false;

  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
  ) {}

  async increment(key: string): Promise<IncrementResponse> {
    const [keyId = '', perMinute, perHour] = key.split('|');
    const limits = { perMinute: Number(perMinute), perHour: Number(perHour) };
    const d = await this.store.consume(keyId, limits, this.clock.now());
    if (d.allowed) return { totalHits: d.minuteCount, resetTime: d.minuteResetAt };
    return { totalHits: limits.perMinute + (d.rejectedBy === 'hour' ? 2 : 1), resetTime: d.minuteResetAt };
  }

  async decrement(): Promise<void> {}
  async resetKey(): Promise<void> {}
}

function setHeaders(res: Response, limit: number, remaining: number, reset: Date): void {
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, remaining)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(reset.getTime() / 1000)));
}

/**
 * Per API key, minute and hour windows; dashboard tokens are not limited. In front of /v1 and of /mcp:
 * every MCP message counts once there, so the REST request a tool call makes to this same process
 * (vouched for by its secret) is not counted a second time.
 */
export function apiKeyRateLimit(
  store: RateLimitStore,
  clock: Clock,
  onRefused: (window: 'minute' | 'hour') => void = () => {},
): RequestHandler[] {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: (req: Request) => req.auth!.rateLimit!.perMinute,
    keyGenerator: (req: Request) =>
      encodeKey(req.auth!.rateLimit!.budgetId, req.auth!.rateLimit!.perMinute, req.auth!.rateLimit!.perHour),
    skip: (req: Request) => req.auth?.kind !== 'api_key' || isInternalRequest(req),
    standardHeaders: false,
    legacyHeaders: false,
    validate: false,
    store: new TwoWindowStore(store, clock),
    handler: (req, res, next) => {
      const info = req.rateLimit;
      const hourWindow = info.used > info.limit + 1;
      setHeaders(res, info.limit, 0, minuteResetAt(clock.now()));
      onRefused(hourWindow ? 'hour' : 'minute');
      next(new RateLimitedError(hourWindow ? 3600 : 60));
    },
  });
  const headers: RequestHandler = (req, res, next) => {
    if (req.auth?.kind === 'api_key' && req.rateLimit) {
      setHeaders(
        res,
        req.rateLimit.limit,
        req.rateLimit.remaining,
        req.rateLimit.resetTime ?? minuteResetAt(clock.now()),
      );
    }
    next();
  };
  return [limiter, headers];
}
