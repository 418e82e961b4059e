import type { ApiModule } from '../../http/api-module.js';
import { registerCallPaths } from './call.openapi.js';
import { callRouter } from './call.router.js';
import type { CallService } from './call.service.js';

export const callModule: ApiModule<[CallService]> = {
  mounts: (calls) => [{ path: '/agents/:agentId/calls', router: callRouter(calls) }],
  openapi: registerCallPaths,
};
