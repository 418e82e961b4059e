import type { Knex } from 'knex';
import type { Db } from '../../db/knex.js';
import type { ToolConfig, ToolType } from './tool-config.schemas.js';

export type Tool = {
  id: string;
  agent_id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  tool_type: ToolType;
  config: ToolConfig;
  is_enabled: boolean;
  priority: number;
  employee_id: string | null;
  created_at: Date;
  updated_at: Date;
};

export type ToolFields = Omit<Tool, 'id' | 'agent_id' | 'created_at' | 'updated_at'>;

export const TOOL_NAME_UNIQUE = 'tools_agent_id_name_unique';
export const TOOL_EMPLOYEE_FK = 'tools_employee_fk';

/** The columns a tool is configured by (its ToolFields): a configuration version keeps them with the id. */
export const TOOL_FIELD_COLUMNS = [
  'name',
  'display_name',
  'description',
  'tool_type',
  'config',
  'is_enabled',
  'priority',
  'employee_id',
] as const satisfies readonly (keyof ToolFields)[];

const COLUMNS = ['id', 'agent_id', ...TOOL_FIELD_COLUMNS, 'created_at', 'updated_at'];

export class ToolRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): ToolRepository {
    return new ToolRepository(trx);
  }

  /** Highest priority first (as TalkPilot: a lower number is a higher priority), then by name. */
  async list(agentId: string): Promise<Tool[]> {
    return this.db('tools')
      .where({ agent_id: agentId })
      .orderBy([
        { column: 'priority', order: 'asc' },
        { column: 'name', order: 'asc' },
      ])
      .select(COLUMNS);
  }

  async find(agentId: string, id: string): Promise<Tool | undefined> {
    return this.db('tools').where({ agent_id: agentId, id }).first(COLUMNS);
  }

  /** Inside a transaction: the row locked for a write (after the agent row, src/db/locks.ts). */
  async findForUpdate(agentId: string, id: string): Promise<Tool | undefined> {
    return this.db('tools').where({ agent_id: agentId, id }).forNoKeyUpdate().first(COLUMNS);
  }

  async nameTaken(agentId: string, name: string, exceptId?: string): Promise<boolean> {
    const query = this.db('tools').where({ agent_id: agentId, name });
    if (exceptId) query.whereNot({ id: exceptId });
    return (await query.first('id')) !== undefined;
  }

  /** `keep` (restoring a version): the id and creation time the tool had before. */
  async insert(
    agent: { id: string; organization_id: string },
    fields: ToolFields,
    at: Date,
    keep?: { id: string; created_at: Date },
  ): Promise<Tool> {
    const [row] = await this.db('tools')
      .insert({
        ...fields,
        config: JSON.stringify(fields.config),
        agent_id: agent.id,
        organization_id: agent.organization_id,
        created_at: keep?.created_at ?? at,
        updated_at: at,
        ...(keep ? { id: keep.id } : {}),
      })
      .returning(COLUMNS);
    return row;
  }

  async update(agentId: string, id: string, changes: Partial<ToolFields>, at: Date): Promise<Tool | undefined> {
    const row = { ...changes, ...(changes.config ? { config: JSON.stringify(changes.config) } : {}), updated_at: at };
    const [updated] = await this.db('tools').where({ agent_id: agentId, id }).update(row).returning(COLUMNS);
    return updated;
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return (await this.db('tools').where({ agent_id: agentId, id }).delete()) > 0;
  }

  /** Names of the agent's tools that forward to `employeeId`. */
  async namesLinkedToEmployee(agentId: string, employeeId: string): Promise<string[]> {
    const rows: { name: string }[] = await this.db('tools')
      .where({ agent_id: agentId, employee_id: employeeId })
      .orderBy('name')
      .select('name');
    return rows.map((r) => r.name);
  }

  /** Linked transfer tools take the employee's phone number: copy a changed number into them. Returns how many. */
  async syncEmployeePhone(agentId: string, employeeId: string, phoneNumber: string, at: Date): Promise<number> {
    return this.db('tools')
      .where({ agent_id: agentId, employee_id: employeeId })
      .update({
        config: this.db.raw(`jsonb_set(config, '{phone_number}', to_jsonb(?::text))`, [phoneNumber]),
        updated_at: at,
      });
  }

  /**
   * A linked tool takes its employee's current phone number, read in this transaction (under the
   * agent lock), so a number changed by a concurrent employee update is never lost. Returns the
   * tool, or undefined when it is not linked to an employee with a number.
   */
  async adoptEmployeePhone(agentId: string, id: string): Promise<Tool | undefined> {
    const [row] = await this.db('tools')
      .where({ agent_id: agentId, id })
      .whereExists((q) =>
        q.select(1).from('employees as e').whereRaw('e.id = tools.employee_id').whereNotNull('e.phone_number'),
      )
      .update({
        config: this.db.raw(
          `jsonb_set(config, '{phone_number}', to_jsonb((SELECT e.phone_number FROM employees e WHERE e.id = tools.employee_id)))`,
        ),
      })
      .returning(COLUMNS);
    return row;
  }

  /**
   * The agent's workflow, with the agent row locked against a concurrent workflow replacement
   * until this transaction ends (a tool it names must not disappear in between).
   */
  async lockWorkflow(agentId: string, organizationId: string): Promise<unknown> {
    const row = await this.db('agents')
      .where({ id: agentId, organization_id: organizationId })
      .forNoKeyUpdate()
      .first('workflow');
    return row?.workflow ?? null;
  }
}
