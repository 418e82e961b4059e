import type { ApiModule } from '../../http/api-module.js';
import { registerCallPaths } from './call.openapi.js';
import { callRouter, organizationCallRouter } from './call.router.js';
import type { CallService } from './call.service.js';
import type { CallStatsService } from './call-stats.service.js';

export const callModule: ApiModule<[CallService, CallStatsService]> = {
  mounts: (calls, stats) => [
    { path: '/agents/:agentId/calls', router: callRouter(calls, stats) },
    { path: '/organization/:orgId/calls', router: organizationCallRouter(stats) },
  ],
  openapi: registerCallPaths,
};
