import type { SharedDeps, BuiltModule } from '../module.js';
import { registerOrganizationPaths } from './organization.openapi.js';
import { OrganizationRepository } from './organization.repository.js';
import { organizationRouter } from './organization.router.js';
import { OrganizationService } from './organization.service.js';

export function buildOrganizationModule({ db, audited, clock }: SharedDeps): BuiltModule {
  const organizations = new OrganizationService(audited, new OrganizationRepository(db), clock);
  return {
    module: {
      mounts: [{ path: '/organization', router: organizationRouter(organizations) }],
      openapi: registerOrganizationPaths,
    },
  };
}
