import type { AgentReadSide } from '../agents/agent.module.js';
import type { AgentService } from '../agents/agent.service.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import type { ToolRepository } from '../tools/tool.repository.js';
import type { ToolService } from '../tools/tool.service.js';
import { WorkflowRepository } from '../workflows/workflow.repository.js';
import { registerAgentVersionPaths } from './agent-version.openapi.js';
import { AgentVersionRepository } from './agent-version.repository.js';
import { agentVersionResources, agentVersionRouter } from './agent-version.router.js';
import { AgentVersionService } from './agent-version.service.js';

/**
 * Restoring a version writes the agent, its tools and its workflow with their own modules' rules:
 * it takes the agents and tools modules' exports. Exports the versions' repository (a simulation
 * can run against a saved version).
 */
export function buildAgentVersionModule(
  deps: SharedDeps & {
    agentReads: AgentReadSide;
    agents: { service: AgentService };
    tools: { service: ToolService; repository: ToolRepository };
  },
): BuiltModule<{ repository: AgentVersionRepository }> {
  const repository = new AgentVersionRepository(deps.db);
  const versions = new AgentVersionService({
    audited: deps.audited,
    versions: repository,
    recorder: deps.versions,
    tools: deps.tools.repository,
    agents: deps.agentReads.repository,
    workflows: new WorkflowRepository(deps.db),
    agentService: deps.agents.service,
    toolService: deps.tools.service,
    access: deps.agentAccess,
    clock: deps.clock,
    guard: deps.testCaseGuard,
  });
  return {
    module: {
      mounts: [
        {
          path: '/agents/:agentId/versions',
          router: agentVersionRouter(versions),
          resources: agentVersionResources(versions),
        },
      ],
      openapi: registerAgentVersionPaths,
    },
    repository,
  };
}
