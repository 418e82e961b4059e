import { describe, expect, it } from 'vitest';
import { underPathPrefix } from '../../src/http/path-prefix.js';

describe('underPathPrefix', () => {
  const exportPath = '/v1/organization/:orgId/data-subjects/export';
  it.each([
    ['/v1/api-keys', '/v1/api-keys', true],
    ['/v1/api-keys', '/v1/api-keys/abc/rotate', true],
    ['/v1/api-keys', '/v1/api-keys?x=1', true],
    ['/v1/api-keys', '/v1/api-keysx', false],
    [exportPath, '/v1/organization/0b6f3c1e-8c1a-4b8e-9a51-6f0e2d7c4a10/data-subjects/export', true],
    [exportPath, '/v1/organization/{orgId}/data-subjects/export', true],
    [exportPath, '/v1/organization/x/data-subjects/erase', false],
    [exportPath, '/v1/organization//data-subjects/export', false],
    [exportPath, '/v1/organization/x', false],
  ])('%s covers %s: %s', (prefix, path, expected) => {
    expect(underPathPrefix(prefix, path)).toBe(expected);
  });
});
