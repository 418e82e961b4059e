import type { AgentReadSide } from '../agents/agent.module.js';
import { EmployeeRepository } from '../employees/employee.repository.js';
import { ForwardingSlotRepository } from '../forwarding-slots/forwarding-slot.repository.js';
import type { KnowledgeBaseJobs } from '../knowledge-base/kb.worker.js';
import { KnowledgeBaseRepository } from '../knowledge-base/knowledge-base.repository.js';
import type { BuiltModule, SharedDeps } from '../module.js';
import type { TestCases } from '../simulation/simulation.module.js';
import { ToolRepository } from '../tools/tool.repository.js';
import { WorkflowRepository } from '../workflows/workflow.repository.js';
import { registerBundlePaths } from './bundle.openapi.js';
import { BundleRepository } from './bundle.repository.js';
import { bundleRouter } from './bundle.router.js';
import { BundleService } from './bundle.service.js';

/**
 * Exports its service: templates create agents through it. A bundle reads and writes the agent's
 * whole configuration, so it takes the repositories of the modules it spans over the same database.
 */
export function buildBundleModule(
  deps: SharedDeps & {
    agentReads: AgentReadSide;
    testCases: TestCases;
    knowledgeBase: { jobs: KnowledgeBaseJobs };
  },
): BuiltModule<{ service: BundleService }> {
  const { db } = deps;
  const service = new BundleService({
    db,
    audited: deps.audited,
    clock: deps.clock,
    access: deps.agentAccess,
    agents: deps.agentReads.repository,
    workflows: new WorkflowRepository(db),
    tools: new ToolRepository(db),
    employees: new EmployeeRepository(db),
    slots: new ForwardingSlotRepository(db),
    simulation: deps.testCases.repository,
    documents: new KnowledgeBaseRepository(db),
    kbJobs: deps.knowledgeBase.jobs,
    bundles: new BundleRepository(db),
    versions: deps.versions,
    guard: deps.testCaseGuard,
    allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  });
  return {
    module: { mounts: [{ path: '/agents', router: bundleRouter(service) }], openapi: registerBundlePaths },
    service,
  };
}
