import { z } from '../../openapi/zod.js';

/** NUL and lone surrogates: PostgreSQL refuses them in text and jsonb, so they are refused here first. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Characters as PostgreSQL's char_length counts them (code points: an emoji is one). */
export function charCount(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/**
 * A string limited in characters (not UTF-16 units), so a 50,000-character prompt of multi-byte
 * characters fits exactly. `min` counts characters after trimming when `trim` is set.
 */
export function text(options: { min?: number; max: number; trim?: boolean }) {
  const base = options.trim ? z.string().trim() : z.string();
  return base
    .superRefine((value, ctx) => {
      if (UNSTORABLE.test(value))
        ctx.addIssue({ code: 'custom', message: 'Must not contain NUL or unpaired surrogate characters' });
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
