import type { ApiModule } from '../../http/api-module.js';
import type { AgentStatusService } from './agent-status.service.js';
import { registerAgentPaths } from './agent.openapi.js';
import { agentRouter, type AgentFromTemplate } from './agent.router.js';
import type { AgentService } from './agent.service.js';
import type { GreetingPreviewService } from './greeting-preview.service.js';

export const agentModule: ApiModule<[AgentService, AgentStatusService, GreetingPreviewService, AgentFromTemplate?]> = {
  mounts: (agents, statuses, greetings, templates) => [
    { path: '/agents', router: agentRouter(agents, statuses, greetings, templates) },
  ],
  openapi: registerAgentPaths,
};
