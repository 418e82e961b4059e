import type { SharedDeps, BuiltModule } from '../module.js';
import { registerMePaths } from './me.openapi.js';
import { MeRepository } from './me.repository.js';
import { meRouter } from './me.router.js';
import { MeService } from './me.service.js';

export function buildMeModule({ db, audited, clock, config }: SharedDeps): BuiltModule {
  const me = new MeService(audited, new MeRepository(db), clock, {
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  });
  return {
    module: {
      mounts: [{ path: '/me', access: { tokenOnly: 'This endpoint' }, router: meRouter(me) }],
      openapi: registerMePaths,
    },
  };
}
