import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { Workflow } from './workflow.schemas.js';

export type WorkflowRow = { id: string; workflow: Workflow | null; workflow_updated_at: Date | null; created_at: Date };

export class WorkflowRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** The same queries inside the caller's transaction. */
  with(trx: Knex.Transaction): WorkflowRepository {
    return new WorkflowRepository(trx);
  }

  /** The agent's workflow, its row locked for a write (FOR NO KEY UPDATE, as lockAgent does). */
  async findForUpdate(agentId: string, organizationId: string): Promise<WorkflowRow | undefined> {
    return this.db('agents')
      .where({ id: agentId, organization_id: organizationId })
      .forNoKeyUpdate()
      .first('id', 'workflow', 'workflow_updated_at', 'created_at');
  }

  /**
   * The agent's tool names. FOR SHARE holds the rows until the transaction ends, so a tool cannot
   * be deleted between this check and the write of a workflow that names it.
   */
  async lockToolNames(agentId: string, organizationId: string): Promise<Set<string>> {
    const rows: { name: string }[] = await this.db('tools')
      .where({ agent_id: agentId, organization_id: organizationId })
      .forShare()
      .select('name');
    return new Set(rows.map((r) => r.name));
  }

  /** Replaces the workflow; `workflow_updated_at` moves only when the stored value changes. */
  async save(
    agentId: string,
    organizationId: string,
    workflow: Workflow | null,
    now: Date,
  ): Promise<WorkflowRow | undefined> {
    const value = workflow === null ? null : JSON.stringify(workflow);
    const [row] = await this.db('agents')
      .where({ id: agentId, organization_id: organizationId })
      .update({
        workflow: value,
        workflow_updated_at: this.db.raw(
          'CASE WHEN workflow IS DISTINCT FROM ?::jsonb THEN ?::timestamptz ELSE workflow_updated_at END',
          [value, now],
        ),
      })
      .returning(['id', 'workflow', 'workflow_updated_at', 'created_at']);
    return row;
  }
}
