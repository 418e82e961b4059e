import type { z } from 'zod';
import { ValidationError, type ErrorDetail } from './app-error.js';

/** `['steps', 1, 'next', 0, 'id']` -> `steps[1].next[0].id` */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** One detail per problem; unknown keys become one detail per key. */
export function zodIssuesToDetails(issues: z.core.$ZodIssue[], prefix: PropertyKey[] = []): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        details.push({ field: formatPath([...prefix, ...issue.path, key]), message: 'Unknown field' });
      }
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest, not "invalid input".
      const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
      details.push(...zodIssuesToDetails(best, [...prefix, ...issue.path]));
      continue;
    }
    details.push({ field: formatPath([...prefix, ...issue.path]) || 'body', message: issue.message });
  }
  return details;
}

export function fromZodError(error: z.ZodError, message = 'Request validation failed'): ValidationError {
  return new ValidationError(message, zodIssuesToDetails(error.issues));
}
