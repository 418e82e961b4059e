import type { ApiModule } from '../../http/api-module.js';
import { registerCallPaths } from './call.openapi.js';
import { callResources, callRouter, organizationCallRouter } from './call.router.js';
import type { CallService } from './call.service.js';
import type { CallStatsService } from './call-stats.service.js';
import type { CallExportService } from './call-export.service.js';

export const callModule: ApiModule<[CallService, CallStatsService, CallExportService]> = {
  mounts: (calls, stats, exporter) => [
    { path: '/agents/:agentId/calls', router: callRouter(calls, stats, exporter), resources: callResources(calls) },
    { path: '/organization/:orgId/calls', router: organizationCallRouter(stats) },
  ],
  openapi: registerCallPaths,
};
