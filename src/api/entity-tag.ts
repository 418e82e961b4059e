import { hash } from 'node:crypto';

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
export type Encoded = { body: string | Buffer; length: number; tag: string };

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

/** The bytes, length and tag of a body: kept in a shared representation's slot, made anew otherwise. */
export function encoded(body: unknown): Encoded {
  const slot = (body as { [ENCODED]?: { value?: Encoded } } | null)?.[ENCODED];
  if (!slot) return encode(body);
  return (slot.value ??= encodeShared(body));
}

/** The tag of a representation as `sendResource` (src/http/entity-tag.ts) would send it. */
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
export function ifNoneMatchHolds(list: TagList, current: string): boolean {
  return list === '*' || list.some((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag) === current);
}

/** What a write request asks of its preconditions: `If-Match` and `?dry_run=true`. */
export type WriteConditions = { ifMatch: TagList | undefined; dryRun: boolean };

export const UNCONDITIONAL: WriteConditions = { ifMatch: undefined, dryRun: false };
