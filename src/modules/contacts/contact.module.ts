import type { ApiModule } from '../../http/api-module.js';
import { registerContactPaths } from './contact.openapi.js';
import { contactResources, contactRouter } from './contact.router.js';
import type { ContactService } from './contact.service.js';

export const contactModule: ApiModule<[ContactService]> = {
  mounts: (contacts) => [
    { path: '/agents/:agentId/contacts', router: contactRouter(contacts), resources: contactResources(contacts) },
  ],
  openapi: registerContactPaths,
};
