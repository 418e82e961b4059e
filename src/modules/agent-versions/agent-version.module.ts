import type { ApiModule } from '../../http/api-module.js';
import { registerAgentVersionPaths } from './agent-version.openapi.js';
import { agentVersionResources, agentVersionRouter } from './agent-version.router.js';
import type { AgentVersionService } from './agent-version.service.js';

export const agentVersionModule: ApiModule<[AgentVersionService]> = {
  mounts: (versions) => [
    {
      path: '/agents/:agentId/versions',
      router: agentVersionRouter(versions),
      resources: agentVersionResources(versions),
    },
  ],
  openapi: registerAgentVersionPaths,
};
