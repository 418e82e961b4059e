import type { ApiModule } from '../../http/api-module.js';
import { registerToolPaths } from './tool.openapi.js';
import { toolResources, toolRouter } from './tool.router.js';
import type { ToolService } from './tool.service.js';

export const toolModule: ApiModule<[ToolService]> = {
  mounts: (tools) => [{ path: '/agents/:agentId/tools', router: toolRouter(tools), resources: toolResources(tools) }],
  openapi: registerToolPaths,
};
