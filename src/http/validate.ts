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

export const agentIdParams = z.object({ agentId: z.uuid({ message: 'Must be a UUID' }) });

/** Path parameters such as `{agentId}` or `{keyId}`: a malformed one is 400 naming it. */
export function uuidParams<K extends string>(...names: K[]) {
  return z.object(
    Object.fromEntries(names.map((n) => [n, z.uuid({ message: 'Must be a UUID' })])) as Record<K, z.ZodUUID>,
  );
}
