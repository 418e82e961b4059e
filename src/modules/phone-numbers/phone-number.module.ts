import type { BuiltModule, SharedDeps } from '../module.js';
import { registerPhoneNumberPaths } from './phone-number.openapi.js';
import { PhoneNumberRepository } from './phone-number.repository.js';
import { phoneNumberResources, phoneNumberRouter } from './phone-number.router.js';
import { PhoneNumberService } from './phone-number.service.js';
import { SecretSealer } from './sealed-secret.js';

export function buildPhoneNumberModule(deps: SharedDeps): BuiltModule<{ service: PhoneNumberService }> {
  const repository = new PhoneNumberRepository(deps.db);
  const service = new PhoneNumberService(
    deps.audited,
    repository,
    deps.agentAccess,
    new SecretSealer(deps.config.SECRETS_KEY),
    deps.clock,
    deps.events,
  );
  return {
    module: {
      mounts: [
        { path: '/phone-numbers', router: phoneNumberRouter(service), resources: phoneNumberResources(service) },
      ],
      openapi: registerPhoneNumberPaths,
    },
    service,
  };
}
