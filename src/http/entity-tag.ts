import { currentRequestContext } from '../audit/request-context.js';
import { hash } from 'node:crypto';
import type { Request, Response } from 'express';
import { ValidationError } from '../errors/index.js';

/**
 * Entity tags (RFC 9110, section 8.8.3) of the configuration resources: a strong tag is the hash of
 * the resource's JSON representation, so it changes whenever the representation does, by whatever
 * path (a version restore, an employee's number flowing into a tool, the CLI), and costs no query:
 * the body a GET serializes anyway is hashed once.
 */
export function entityTagOfJson(json: string | Buffer): string {
  // One-shot hashing: no Hash object per response. SHA-1 is fast and, for an opaque tag that only
  // has to change with the content, collision-resistant enough.
  return `"${hash('sha1', json, 'base64url')}"`;
}

/**
 * A body as it is sent, its length in bytes and its tag. A shared representation keeps its UTF-8
 * bytes (encoded once, sent many times); a body sent once stays text, which the socket encodes as it
 * writes, instead of being copied into a buffer first.
 */
type Encoded = { body: string | Buffer; length: number; tag: string };

function encode(body: unknown): Encoded {
  const json = JSON.stringify(body);
  return { body: json, length: Buffer.byteLength(json), tag: entityTagOfJson(json) };
}

function encodeShared(body: unknown): Encoded {
  const bytes = Buffer.from(JSON.stringify(body));
  return { body: bytes, length: bytes.length, tag: entityTagOfJson(bytes) };
}

const ENCODED = Symbol('encoded');

/**
 * Freezes a representation that will never change (built from a row the read cache shares) and
 * gives it a slot for its encoding, so that every response after the first sends the same bytes
 * and tag without serialising and hashing again.
 */
export function sharedRepresentation<T extends object>(representation: T): Readonly<T> {
  Object.defineProperty(representation, ENCODED, { value: {} });
  return Object.freeze(representation);
}

function encoded(body: unknown): Encoded {
  const slot = (body as { [ENCODED]?: { value?: Encoded } } | null)?.[ENCODED];
  if (!slot) return encode(body);
  return (slot.value ??= encodeShared(body));
}

/** The tag of a representation as `sendResource` would send it. */
export function entityTag(representation: unknown): string {
  return entityTagOfJson(JSON.stringify(representation));
}

/** `*`, or the listed tags (weak ones as `W/"..."`, which never match a strong comparison). */
export type TagList = '*' | string[];

/** Parses `If-Match` / `If-None-Match`; an unquoted tag is taken as if it were quoted. */
export function parseTagList(header: string | undefined): TagList | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (header.trim() === '*') return '*';
  return header
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '')
    .map((tag) => (tag.startsWith('W/') || tag.startsWith('"') ? tag : `"${tag}"`));
}

/** If-Match: strong comparison; `*` matches any existing representation. */
export function ifMatchHolds(list: TagList, current: string | undefined): boolean {
  if (current === undefined) return false;
  return list === '*' || list.includes(current);
}

/** If-None-Match: weak comparison (`W/"x"` matches `"x"`). */
function ifNoneMatchHolds(list: TagList, current: string): boolean {
  return list === '*' || list.some((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag) === current);
}

/** What a write request asks of its preconditions: `If-Match` and `?dry_run=true`. */
export type WriteConditions = { ifMatch: TagList | undefined; dryRun: boolean };

export const UNCONDITIONAL: WriteConditions = { ifMatch: undefined, dryRun: false };

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
};

/**
 * Sends a single resource with its `ETag`. A GET whose `If-None-Match` matches gets 304 without a
 * body. A dry run says so in `Dry-Run: true` and carries no tag: nothing was stored; the saved
 * test cases it would make fail (require_passing_test_cases) are named in `Test-Cases-Failed`.
 */
export function sendResource(req: Request, res: Response, body: unknown, options: SendOptions = {}): void {
  if (options.dryRun) {
    const failing = currentRequestContext()?.failingTestCases;
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
