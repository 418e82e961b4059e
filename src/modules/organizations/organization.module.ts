import type { ApiModule } from '../../http/api-module.js';
import { registerOrganizationPaths } from './organization.openapi.js';
import { organizationRouter } from './organization.router.js';
import type { OrganizationService } from './organization.service.js';

export const organizationModule: ApiModule<[OrganizationService]> = {
  mounts: (organizations) => [{ path: '/organization', router: organizationRouter(organizations) }],
  openapi: registerOrganizationPaths,
};
