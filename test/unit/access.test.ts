import { describe, expect, it } from 'vitest';
import { keyOrganizations, tokenOrganizations } from '../../src/auth/access.js';
import { PERMISSIONS } from '../../src/auth/permissions.js';

const sorted = (set: ReadonlySet<string> | undefined) => [...(set ?? [])].sort();

describe('keyOrganizations', () => {
  it("holds the key's permissions where the creator is an admin, and only their :read part where a member", () => {
    const orgs = keyOrganizations(['agents:read', 'agents:write', 'privacy:write', 'not:a-permission'], {
      a: 'developer_admin',
      b: 'member',
      c: 'admin',
    });
    expect(sorted(orgs.get('a'))).toEqual(['agents:read', 'agents:write', 'privacy:write']);
    expect(sorted(orgs.get('b'))).toEqual(['agents:read']);
    expect(sorted(orgs.get('c'))).toEqual(['agents:read', 'agents:write', 'privacy:write']);
  });

  it('reaches only the organizations the creator is a member of, and none without any', () => {
    expect([...keyOrganizations([...PERMISSIONS], { a: 'member' }).keys()]).toEqual(['a']);
    expect(keyOrganizations([...PERMISSIONS], {}).size).toBe(0);
  });

  it('never grants more than the key holds, whatever the role', () => {
    const orgs = keyOrganizations(['calls:read'], { a: 'developer_admin', b: 'member' });
    expect(sorted(orgs.get('a'))).toEqual(['calls:read']);
    expect(sorted(orgs.get('b'))).toEqual(['calls:read']);
  });
});

describe('tokenOrganizations', () => {
  it("holds each membership's role", () => {
    const orgs = tokenOrganizations([
      { organization_id: 'a', role: 'admin' },
      { organization_id: 'b', role: 'member' },
    ]);
    expect(orgs.get('a')?.size).toBe(PERMISSIONS.length);
    expect([...(orgs.get('b') ?? [])].every((p) => p.endsWith(':read'))).toBe(true);
  });
});
