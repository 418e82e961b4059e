import type { ApiModule } from '../../http/api-module.js';
import { registerHealthPaths } from './health.openapi.js';
import { healthRouter } from './health.router.js';
import type { HealthService } from './health.service.js';

export const healthModule: ApiModule<[HealthService]> = {
  mounts: (health) => [{ path: '/health', access: 'public', router: healthRouter(health) }],
  openapi: registerHealthPaths,
};
