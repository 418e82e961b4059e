export const PERMISSIONS = [
  'agents:read',
  'agents:write',
  'employees:read',
  'employees:write',
  'tools:read',
  'tools:write',
  'forwarding:read',
  'forwarding:write',
  'kb:read',
  'kb:write',
  'calls:read',
  'calls:write',
  'contacts:read',
  'contacts:write',
  'organization:read',
  'organization:write',
  'privacy:write',
  'outbound:read',
  'outbound:write',
  'outbound:dispatch',
  'phone_numbers:read',
  'phone_numbers:write',
  'runtime:route',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['developer_admin', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

const ALL: ReadonlySet<Permission> = new Set(PERMISSIONS);
const READ_ONLY: ReadonlySet<Permission> = new Set(PERMISSIONS.filter((p) => p.endsWith(':read')));

/** Dashboard roles: developer_admin and admin hold every permission, member the :read ones. */
export function permissionsForRole(role: Role): ReadonlySet<Permission> {
  return role === 'member' ? READ_ONLY : ALL;
}

export function isPermission(value: string): value is Permission {
  return (ALL as ReadonlySet<string>).has(value);
}
