/**
 * Whether `path` is `prefix` or lies below it. A `:name` segment of the prefix (an Express mount
 * path such as `/v1/organization/:orgId/data-subjects/export`) matches any one segment, so does an
 * OpenAPI `{name}` segment of the path. A query string after the path is ignored.
 */
export function underPathPrefix(prefix: string, path: string): boolean {
  const wanted = prefix.split('/');
  const given = path.split('?')[0]!.split('/');
  if (given.length < wanted.length) return false;
  return wanted.every((segment, i) => {
    const actual = given[i]!;
    return segment.startsWith(':') ? actual !== '' : segment === actual;
  });
}
