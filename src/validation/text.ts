import { z } from '../openapi/zod.js';

/**
 * The one text rule. PostgreSQL refuses NUL (U+0000) in text and jsonb, and a lone UTF-16 surrogate
 * cannot be encoded as UTF-8 at all: both are refused before anything reaches a query. Lengths are
 * counted in code points, as PostgreSQL's char_length and varchar(n) count them (an emoji is one).
 *
 * Two layers apply it: `findUnstorable` walks every parsed JSON body and query string in the request
 * middleware (src/http/input-guard.ts), so a new schema cannot forget it; `text()` is the zod string
 * every input schema uses for lengths, and repeats the check for values that did not come from HTTP.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_MESSAGE = 'Must not contain NUL or unpaired surrogate characters';

/** Deeper JSON than this is refused: no input of this API nests anywhere near it. */
export const MAX_JSON_DEPTH = 32;

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** Characters as PostgreSQL's char_length counts them (code points: an emoji is one). */
export function charCount(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

type StringParams = Exclude<Parameters<typeof z.string>[0], string | undefined>;

export type TextProblem = { path: PropertyKey[]; message: string };

/**
 * A string (value or object key) that breaks the text rule, or a nesting deeper than
 * MAX_JSON_DEPTH, with its path; the shallowest one, the first in order among those. Iterative, so a
 * hostile nesting cannot overflow the stack.
 */
export function findUnstorable(root: unknown): TextProblem | undefined {
  if (typeof root === 'string') return isStorableText(root) ? undefined : { path: [], message: UNSTORABLE_MESSAGE };
  // Only containers are stacked, and a path is built only for them: a body of 400,000 numbers or
  // short strings is checked without allocating per item.
  const stack: { value: object; path: PropertyKey[] }[] = [];
  if (typeof root === 'object' && root !== null) stack.push({ value: root, path: [] });
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (path.length >= MAX_JSON_DEPTH) return { path, message: `Must not nest deeper than ${MAX_JSON_DEPTH} levels` };
    const keys: PropertyKey[] | undefined = Array.isArray(value) ? undefined : Object.keys(value);
    const length = keys ? keys.length : (value as unknown[]).length;
    const children: { value: object; path: PropertyKey[] }[] = [];
    for (let i = 0; i < length; i++) {
      const key = keys ? keys[i]! : i;
      if (typeof key === 'string' && !isStorableText(key)) return { path: [...path, key], message: UNSTORABLE_MESSAGE };
      const item = (value as Record<PropertyKey, unknown>)[key];
      if (typeof item === 'string') {
        if (!isStorableText(item)) return { path: [...path, key], message: UNSTORABLE_MESSAGE };
      } else if (typeof item === 'object' && item !== null) {
        children.push({ value: item, path: [...path, key] });
      }
    }
    // Reversed, so that the first child is looked at first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/**
 * A string limited in characters (not UTF-16 units), so a 50,000-character prompt of multi-byte
 * characters fits exactly. `min` counts characters after trimming when `trim` is set. Use it for
 * every text input field and query filter instead of zod's `.min()`/`.max()`.
 */
export function text(options: { min?: number; max: number; trim?: boolean; error?: StringParams['error'] }) {
  const string = z.string(options.error ? { error: options.error } : undefined);
  const base = options.trim ? string.trim() : string;
  return base
    .superRefine((value, ctx) => {
      if (!isStorableText(value)) ctx.addIssue({ code: 'custom', message: UNSTORABLE_MESSAGE });
      const n = charCount(value);
      if (options.min !== undefined && n < options.min) {
        ctx.addIssue({
          code: 'custom',
          message: options.min === 1 ? 'Must not be empty' : `Must be at least ${options.min} characters`,
        });
      }
      if (n > options.max) ctx.addIssue({ code: 'custom', message: `Must be at most ${options.max} characters` });
    })
    .openapi({ minLength: options.min, maxLength: options.max });
}
