import type { Knex } from 'knex';
import type { AgentRef } from '../../auth/auth-context.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../http/pagination.js';

export type AgentRow = {
  id: string;
  organization_id: string;
  name: string;
  phone_number: string;
  is_active: boolean;
  language: string | null;
  workflow: unknown;
  workflow_updated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  [column: string]: unknown;
};

/** The columns of the API's Agent; internal ones (the workflow) are served by their own endpoints. */
export function toAgent(row: AgentRow): Record<string, unknown> {
  const { workflow: _workflow, workflow_updated_at: _workflowUpdatedAt, ...agent } = row;
  return agent;
}

export class AgentRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  /** Just enough to authorise a sub-resource request: one indexed read. */
  async findRef(id: string, organizationIds: string[]): Promise<(AgentRef & { language: string | null }) | undefined> {
    return this.db('agents')
      .where({ id })
      .whereIn('organization_id', organizationIds)
      .first('id', 'organization_id', 'language');
  }

  async findById(id: string, organizationIds: string[]): Promise<AgentRow | undefined> {
    return this.db('agents').where({ id }).whereIn('organization_id', organizationIds).first();
  }

  /** Newest first; `allowedIds` null = every agent of the organizations. */
  async list(organizationIds: string[], allowedIds: readonly string[] | null, page: PageParams): Promise<Page<Record<string, unknown>>> {
    const query = this.db('agents').whereIn('organization_id', organizationIds);
    if (allowedIds !== null) query.whereIn('id', [...allowedIds]);
    return paginate<AgentRow, Record<string, unknown>>(
      query.select('*'),
      page,
      [
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ],
      toAgent,
    );
  }
}
