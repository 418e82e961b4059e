import { expect } from 'vitest';
import type { z } from '../../src/openapi/zod.js';

/**
 * Checks a response body against the zod schema the OpenAPI document shows for it, and that the body
 * has no field the schema does not declare (an undocumented column reaching a response fails here).
 * Returns the parsed body.
 */
export function expectSchema<S extends z.ZodType>(res: { body: unknown }, schema: S): z.output<S> {
  const result = schema.safeParse(res.body);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
    expect.fail(`response does not match its schema:\n  ${problems.join('\n  ')}\n${JSON.stringify(res.body)}`);
  }
  // Object schemas drop the keys they do not declare: whatever the parse dropped is undocumented.
  expect(undeclared(res.body, result.data), 'fields the schema does not declare').toEqual([]);
  return result.data;
}

function undeclared(body: unknown, parsed: unknown, path = ''): string[] {
  if (Array.isArray(body) && Array.isArray(parsed)) {
    return body.flatMap((item, i) => undeclared(item, parsed[i], `${path}[${i}]`));
  }
  if (!isObject(body) || !isObject(parsed)) return [];
  return Object.keys(body).flatMap((key) => {
    const at = path ? `${path}.${key}` : key;
    return key in parsed ? undeclared(body[key], parsed[key], at) : [at];
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
