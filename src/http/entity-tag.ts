import type { Request, Response } from 'express';
import { encoded, entityTag, ifNoneMatchHolds, parseTagList, type WriteConditions } from '../api/entity-tag.js';
import { ValidationError } from '../errors/index.js';

// The Express side of entity tags: reading a write's conditions from the request and sending a
// resource with its ETag. The tags themselves (hashing, parsing, comparing) live in src/api, which
// services use too.

/**
 * The write's `If-Match` and `dry_run` (true or false; anything else is a 400 naming it). A write
 * that cannot be dry-run refuses `dry_run=true` rather than quietly doing it for real.
 */
export function writeConditions(req: Request, { dryRunnable = false } = {}): WriteConditions {
  const raw = (req.query as Record<string, unknown> | undefined)?.dry_run;
  if (raw !== undefined && raw !== 'true' && raw !== 'false') {
    throw new ValidationError('Invalid query parameters', [{ field: 'dry_run', message: 'Must be true or false' }]);
  }
  if (raw === 'true' && !dryRunnable) {
    throw new ValidationError('Invalid query parameters', [
      { field: 'dry_run', message: 'This operation has no dry run' },
    ]);
  }
  return { ifMatch: parseTagList(req.get('If-Match')), dryRun: raw === 'true' };
}

const JSON_TYPE = 'application/json; charset=utf-8';

export type SendOptions = {
  /** 200 unless given; a dry run answers 200 where the real request answers 201. */
  status?: number;
  dryRun?: boolean;
  /** The representation a GET shows, when the answer carries more (PUT of the slots adds a count). */
  representation?: unknown;
  /** A dry run's saved test cases that the change would make fail, as the service returned them. */
  failingTestCases?: readonly string[];
};

/**
 * Sends a single resource with its `ETag`. A GET whose `If-None-Match` matches gets 304 without a
 * body. A dry run says so in `Dry-Run: true` and carries no tag: nothing was stored; the saved
 * test cases it would make fail (require_passing_test_cases) are named in `Test-Cases-Failed`.
 */
export function sendResource(req: Request, res: Response, body: unknown, options: SendOptions = {}): void {
  if (options.dryRun) {
    const failing = options.failingTestCases;
    if (failing?.length) res.set('Test-Cases-Failed', failing.join(', '));
    res.status(200).set('Dry-Run', 'true').set('Content-Type', JSON_TYPE).send(JSON.stringify(body));
    return;
  }
  const { body: payload, length, tag: bodyTag } = encoded(body);
  const tag = options.representation === undefined ? bodyTag : entityTag(options.representation);
  res.setHeader('ETag', tag);
  if (req.method === 'GET' || req.method === 'HEAD') {
    const ifNoneMatch = parseTagList(req.get('If-None-Match'));
    if (ifNoneMatch && ifNoneMatchHolds(ifNoneMatch, tag)) {
      res.status(304).end();
      return;
    }
  }
  // Written as `res.send` would write this body, without its second look at the conditions (done
  // above) and at headers set here: the type as `res.type('json')` sets it, and the length.
  res.statusCode = options.status ?? 200;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', length);
  if (req.method === 'HEAD') res.end();
  else res.end(payload);
}
