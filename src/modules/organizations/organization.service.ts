import { assertPermission, organizationsWith, type AuthContext } from '../../auth/auth-context.js';
import type { OrganizationRepository, OrganizationRow } from './organization.repository.js';

export class OrganizationService {
  constructor(private readonly organizations: OrganizationRepository) {}

  /** Every organization the caller reaches with organization:read (for a key: its creator's). */
  async list(auth: AuthContext): Promise<{ data: OrganizationRow[] }> {
    assertPermission(auth, 'organization:read');
    return { data: await this.organizations.listByIds(organizationsWith(auth, 'organization:read')) };
  }
}
