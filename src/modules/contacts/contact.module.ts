import type { SharedDeps, BuiltModule } from '../module.js';
import { registerContactPaths } from './contact.openapi.js';
import { ContactRepository } from './contact.repository.js';
import { contactResources, contactRouter } from './contact.router.js';
import { ContactService } from './contact.service.js';

export function buildContactModule(deps: SharedDeps): BuiltModule {
  const { db, audited, agentAccess, clock, testCaseGuard } = deps;
  const contacts = new ContactService(audited, new ContactRepository(db), agentAccess, clock, testCaseGuard);
  return {
    module: {
      mounts: [
        { path: '/agents/:agentId/contacts', router: contactRouter(contacts), resources: contactResources(contacts) },
      ],
      openapi: registerContactPaths,
    },
  };
}
