import type { AgentReadSide } from '../agents/agent.module.js';
import { EmployeeRepository } from '../employees/employee.repository.js';
import type { SharedDeps, BuiltModule } from '../module.js';
import { ToolReferences } from './tool-references.js';
import { registerToolPaths } from './tool.openapi.js';
import { ToolRepository } from './tool.repository.js';
import { toolResources, toolRouter } from './tool.router.js';
import { ToolService } from './tool.service.js';

/** Exports its service (restoring a version checks tools with its rules) and repository. */
export function buildToolModule(
  deps: SharedDeps & { agentReads: AgentReadSide },
): BuiltModule<{ service: ToolService; repository: ToolRepository }> {
  const { db, config } = deps;
  const repository = new ToolRepository(db);
  // A tool names an employee (transfer) or another agent (handoff): both are checked when written.
  const references = new ToolReferences(
    new EmployeeRepository(db),
    deps.agentReads.repository,
    config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  );
  const service = new ToolService(
    deps.audited,
    repository,
    references,
    deps.agentAccess,
    deps.versions,
    deps.clock,
    deps.testCaseGuard,
  );
  return {
    module: {
      mounts: [{ path: '/agents/:agentId/tools', router: toolRouter(service), resources: toolResources(service) }],
      openapi: registerToolPaths,
    },
    service,
    repository,
  };
}
