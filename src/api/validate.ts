import { z } from 'zod';
import { fromZodError } from '../errors/index.js';

/** Parses or throws 400 VALIDATION_ERROR with one detail per problem. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, message?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error, message);
  return result.data;
}

/** Bodies are parsed in services, after permission and agent checks: a caller without access learns nothing from a 400. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  return parse(schema, body ?? {}, 'Request body is invalid');
}

/**
 * One field of a body not yet parsed (undefined when the body is not an object): for the checks
 * that must look at a field before, or beside, the schema that parses the whole body.
 */
export function bodyField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

/**
 * The one id rule: a UUID in any case, canonicalised to lower case, so that advisory locks, cache
 * keys and comparisons in code see one form of every id (PostgreSQL itself ignores the case).
 * Every path parameter goes through it (`uuidParams`); body fields holding ids use it too.
 */
export const uuidField = () => z.uuid({ message: 'Must be a UUID' }).overwrite((id) => id.toLowerCase());

export const agentIdParams = z.object({ agentId: uuidField() });

/** Path parameters such as `{agentId}` or `{keyId}`: a malformed one is 400 naming it. */
export function uuidParams<K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((n) => [n, uuidField()])) as Record<K, ReturnType<typeof uuidField>>);
}
