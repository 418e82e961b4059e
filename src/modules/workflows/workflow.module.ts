import type { ApiModule } from '../../http/api-module.js';
import { registerWorkflowPaths } from './workflow.openapi.js';
import { workflowRouter } from './workflow.router.js';
import type { WorkflowService } from './workflow.service.js';

export const workflowModule: ApiModule<[WorkflowService]> = {
  mounts: (workflows) => [{ path: '/agents/:agentId/workflow', router: workflowRouter(workflows) }],
  openapi: registerWorkflowPaths,
};
