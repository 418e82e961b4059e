import type { SharedDeps, BuiltModule } from '../module.js';
import { registerWorkflowPaths } from './workflow.openapi.js';
import { WorkflowRepository } from './workflow.repository.js';
import { workflowRouter } from './workflow.router.js';
import { WorkflowService } from './workflow.service.js';

export function buildWorkflowModule(deps: SharedDeps): BuiltModule {
  const { db, audited, agentAccess, versions, clock, testCaseGuard } = deps;
  const workflows = new WorkflowService(
    audited,
    new WorkflowRepository(db),
    agentAccess,
    versions,
    clock,
    testCaseGuard,
  );
  return {
    module: {
      mounts: [{ path: '/agents/:agentId/workflow', router: workflowRouter(workflows) }],
      openapi: registerWorkflowPaths,
    },
  };
}
