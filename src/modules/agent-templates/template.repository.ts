import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { AgentTemplateVariable } from './template.schemas.js';

export type TemplateRow = {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  variables: AgentTemplateVariable[];
  bundle: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};

export const TEMPLATE_NAME_UNIQUE = 'agent_templates_organization_name_unique';

const COLUMNS = ['id', 'organization_id', 'name', 'description', 'variables', 'bundle', 'created_at', 'updated_at'];

export function toTemplate(row: TemplateRow) {
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    description: row.description,
    variables: row.variables,
    bundle: row.bundle,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export class TemplateRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): TemplateRepository {
    return new TemplateRepository(trx);
  }

  async list(organizationIds: string[]): Promise<TemplateRow[]> {
    if (organizationIds.length === 0) return [];
    return this.db('agent_templates')
      .whereIn('organization_id', organizationIds)
      .orderBy(['name', 'id'])
      .select(COLUMNS);
  }

  async find(organizationIds: string[], id: string): Promise<TemplateRow | undefined> {
    if (organizationIds.length === 0) return undefined;
    return this.db('agent_templates').whereIn('organization_id', organizationIds).where({ id }).first(COLUMNS);
  }

  async insert(fields: Omit<TemplateRow, 'id'>): Promise<TemplateRow> {
    const [row] = await this.db('agent_templates')
      .insert({ ...fields, variables: JSON.stringify(fields.variables), bundle: JSON.stringify(fields.bundle) })
      .returning(COLUMNS);
    return row;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    return (await this.db('agent_templates').where({ organization_id: organizationId, id }).delete()) > 0;
  }
}
