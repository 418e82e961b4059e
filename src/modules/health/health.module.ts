import type { SharedDeps, BuiltModule } from '../module.js';
import { registerHealthPaths } from './health.openapi.js';
import { healthRouter } from './health.router.js';
import { HealthService } from './health.service.js';

export function buildHealthModule({ db, clock, config }: SharedDeps): BuiltModule {
  const health = new HealthService(db, clock, { version: config.APP_VERSION, commit: config.APP_COMMIT });
  return {
    module: {
      mounts: [{ path: '/health', access: 'public', router: healthRouter(health) }],
      openapi: registerHealthPaths,
    },
  };
}
