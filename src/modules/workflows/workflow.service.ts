import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { NotFoundError, ValidationError } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { assertWritePreconditions } from '../../api/write-preconditions.js';
import { requiresIfMatch } from '../organizations/organization.repository.js';
import type { AgentVersionRecorder } from '../agent-versions/agent-version.recorder.js';
import type { AgentAccess } from '../agents/agent-access.js';
import {
  checkedWrite,
  NO_CHANGE_GUARD,
  type AgentChangeGuard,
  type CheckedWrite,
} from '../agents/agent-change-guard.js';
import { unwrapWorkflowBody, validateWorkflow } from './workflow-rules.js';
import type { WorkflowRepository, WorkflowRow } from './workflow.repository.js';
import type { Workflow } from './workflow.schemas.js';

export type WorkflowRecord = { agent_id: string; workflow: Workflow | null; updated_at: Date };

function toRecord(row: WorkflowRow): WorkflowRecord {
  return { agent_id: row.id, workflow: row.workflow ?? null, updated_at: row.workflow_updated_at ?? row.created_at };
}

export class WorkflowService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly workflows: WorkflowRepository,
    private readonly access: AgentAccess,
    private readonly versions: AgentVersionRecorder,
    private readonly clock: Clock,
    private readonly guard: AgentChangeGuard = NO_CHANGE_GUARD,
  ) {}

  /** The agent's workflow record (agents:read); `workflow: null` for a single-prompt agent. */
  async get(auth: AuthContext, agentId: string): Promise<WorkflowRecord> {
    return toRecord(await this.access.resolve(auth, agentId, 'agents:read'));
  }

  /**
   * Replaces the workflow completely (agents:write), or removes it with `{workflow: null}`. Every
   * problem is listed in one 400 and nothing is written. `If-Match` is checked against the locked
   * agent row; a dry run answers the same and stores nothing.
   */
  async replace(
    auth: AuthContext,
    agentId: string,
    body: unknown,
    conditions: WriteConditions,
  ): Promise<CheckedWrite<WorkflowRecord>> {
    const agent = await this.access.resolve(auth, agentId, 'agents:write');
    const input = unwrapWorkflowBody(body);
    const written = await checkedWrite(this.audited, this.guard, agent, conditions.dryRun, async (trx) => {
      const repository = this.workflows.with(trx);
      // Lock order (src/db/locks.ts): the agent row, then its tools (FOR SHARE in lockToolNames).
      const current = await repository.findForUpdate(agent.id, agent.organization_id);
      if (!current) throw new NotFoundError('Agent');
      await assertWritePreconditions(trx, conditions, requiresIfMatch, {
        organizationId: agent.organization_id,
        current: toRecord(current),
      });
      const details = [...input.details];
      let workflow: Workflow | null = null;
      if (!input.remove && input.value !== undefined) {
        const result = validateWorkflow(input.value, await repository.lockToolNames(agent.id, agent.organization_id));
        details.push(...result.details);
        workflow = result.workflow ?? null;
      }
      if (details.length > 0) throw new ValidationError('Workflow is invalid', details);
      const row = await repository.save(agent.id, agent.organization_id, workflow, this.clock.now());
      if (!row) throw new NotFoundError('Agent');
      await this.versions.record(trx, agent, auth, 'workflow.replaced');
      return toRecord(row);
    });
    if (!conditions.dryRun) await this.access.changed();
    return written;
  }
}
