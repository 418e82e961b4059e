import { isPermission, permissionsForRole, type Permission, type Role } from './permissions.js';

/**
 * The one authorization model: what a credential holds in each organization it reaches. Pure, and
 * computed once per credential read, by the authentication middleware; services only ask the result
 * (assertPermission, assertAgentAccess in auth-context.ts), never re-derive it.
 *
 * - A dashboard token holds its user's role in each organization the user is a member of.
 * - An API key reaches every organization its creator is a member of right now, and holds there the
 *   key's permissions that the creator's current role there also holds: a key is never stronger than
 *   the person who made it, and a demotion or removal counts from the next request on (the read
 *   cache is dropped on every membership change).
 * Agent scope (`allowed_agent_ids`) and address (`allowed_ips`) are the key's own and apply everywhere.
 * docs/auth-and-errors.md shows the model as a table.
 */

/** The permissions held per organization id reached. */
export type OrganizationPermissions = ReadonlyMap<string, ReadonlySet<Permission>>;

/** A token: each membership's role. */
export function tokenOrganizations(
  memberships: readonly { organization_id: string; role: Role }[],
): OrganizationPermissions {
  return new Map(memberships.map((m) => [m.organization_id, permissionsForRole(m.role)]));
}

/** A key: its permissions intersected with its creator's role in each of the creator's organizations. */
export function keyOrganizations(
  keyPermissions: readonly string[],
  creatorRoles: Readonly<Record<string, Role>>,
): OrganizationPermissions {
  const granted = new Set(keyPermissions.filter(isPermission));
  // At most one set per role (three roles): organizations of the same role share it.
  const byRole = new Map<Role, ReadonlySet<Permission>>();
  const organizations = new Map<string, ReadonlySet<Permission>>();
  for (const [organizationId, role] of Object.entries(creatorRoles)) {
    let held = byRole.get(role);
    if (!held) {
      const allowed = permissionsForRole(role);
      held =
        allowed.size >= granted.size && [...granted].every((p) => allowed.has(p))
          ? granted
          : intersect(granted, allowed);
      byRole.set(role, held);
    }
    organizations.set(organizationId, held);
  }
  return organizations;
}

function intersect(a: ReadonlySet<Permission>, b: ReadonlySet<Permission>): ReadonlySet<Permission> {
  return new Set([...a].filter((p) => b.has(p)));
}
