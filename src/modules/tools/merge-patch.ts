type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * RFC 7396 JSON Merge Patch: `patch`'s fields replace the target's, a field set to null removes
 * it, nested objects merge the same way, and lists replace as a whole.
 */
export function mergePatch(target: JsonObject, patch: JsonObject): JsonObject {
  const result: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (isObject(value)) result[key] = mergePatch(isObject(result[key]) ? result[key] : {}, value);
    else result[key] = value;
  }
  return result;
}
