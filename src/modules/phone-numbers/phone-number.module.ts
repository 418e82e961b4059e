import type { ApiModule } from '../../http/api-module.js';
import type { Db } from '../../db/knex.js';
import type { Clock } from '../../clock.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { registerPhoneNumberPaths } from './phone-number.openapi.js';
import { PhoneNumberRepository } from './phone-number.repository.js';
import { phoneNumberRouter } from './phone-number.router.js';
import { PhoneNumberService } from './phone-number.service.js';
import { SecretSealer } from './sealed-secret.js';

export const phoneNumberModule: ApiModule<[PhoneNumberService]> = {
  mounts: (numbers) => [{ path: '/phone-numbers', router: phoneNumberRouter(numbers) }],
  openapi: registerPhoneNumberPaths,
};

/** The module's own wiring: the container passes what it shares and mounts the result. */
export function buildPhoneNumbers(deps: { db: Db; access: AgentAccess; clock: Clock; secretsKey: string | undefined }) {
  const repository = new PhoneNumberRepository(deps.db);
  const service = new PhoneNumberService(
    deps.db,
    repository,
    deps.access,
    new SecretSealer(deps.secretsKey),
    deps.clock,
  );
  return { repository, service };
}
