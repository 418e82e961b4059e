import type { Knex } from 'knex';
import { dateColumn } from '../../db/date-column.js';
import type { Db } from '../../db/knex.js';
import { paginate, type Page, type PageParams } from '../../api/pagination.js';
import type { EmployeeStatus } from './employee.schemas.js';

export type Employee = {
  id: string;
  agent_id: string;
  name: string;
  phone_number: string | null;
  email: string | null;
  status: EmployeeStatus;
  active: boolean;
  get_mail: boolean;
  back_at_work_at: string | null;
  notdienst_bereich: string | null;
  created_at: Date;
  updated_at: Date;
};

export type EmployeeFields = Omit<Employee, 'id' | 'agent_id' | 'created_at' | 'updated_at'>;

/** The columns an employee is configured by (its EmployeeFields): what an agent bundle carries. */
export const EMPLOYEE_FIELD_COLUMNS = [
  'name',
  'phone_number',
  'email',
  'status',
  'active',
  'get_mail',
  'back_at_work_at',
  'notdienst_bereich',
] as const satisfies readonly (keyof EmployeeFields)[];

const COLUMNS = ['id', 'agent_id', ...EMPLOYEE_FIELD_COLUMNS, 'created_at', 'updated_at'];

function toEmployee(row: Record<string, unknown>): Employee {
  return { ...(row as Employee), back_at_work_at: dateColumn(row.back_at_work_at as Date | null) };
}

export class EmployeeRepository {
  constructor(private readonly db: Db | Knex.Transaction) {}

  with(trx: Knex.Transaction): EmployeeRepository {
    return new EmployeeRepository(trx);
  }

  /** Alphabetical (case-insensitive), ties broken by id. */
  async list(
    agentId: string,
    filters: { status?: EmployeeStatus; active?: boolean },
    page: PageParams,
  ): Promise<Page<Employee>> {
    const query = this.db('employees').where({ agent_id: agentId });
    if (filters.status !== undefined) query.where({ status: filters.status });
    if (filters.active !== undefined) query.where({ active: filters.active });
    query.select(COLUMNS).orderByRaw('lower(name) asc');
    return paginate<Record<string, unknown>, Employee>(
      query,
      page,
      [
        { column: 'name', order: 'asc' },
        { column: 'id', order: 'asc' },
      ],
      toEmployee,
    );
  }

  async find(agentId: string, id: string): Promise<Employee | undefined> {
    const row = await this.db('employees').where({ agent_id: agentId, id }).first(COLUMNS);
    return row ? toEmployee(row) : undefined;
  }

  /** Inside a transaction: the row, locked until commit, so status changes are seen one at a time. */
  async findForUpdate(agentId: string, id: string): Promise<Employee | undefined> {
    const row = await this.db('employees').where({ agent_id: agentId, id }).forUpdate().first(COLUMNS);
    return row ? toEmployee(row) : undefined;
  }

  async insert(agentId: string, fields: EmployeeFields, at: Date): Promise<Employee> {
    const [row] = await this.db('employees')
      .insert({ ...fields, agent_id: agentId, created_at: at, updated_at: at })
      .returning(COLUMNS);
    return toEmployee(row);
  }

  async update(agentId: string, id: string, changes: Partial<EmployeeFields>, at: Date): Promise<Employee | undefined> {
    const [row] = await this.db('employees')
      .where({ agent_id: agentId, id })
      .update({ ...changes, updated_at: at })
      .returning(COLUMNS);
    return row ? toEmployee(row) : undefined;
  }

  async delete(agentId: string, id: string): Promise<boolean> {
    return (await this.db('employees').where({ agent_id: agentId, id }).delete()) > 0;
  }

  /** The emergency-duty areas the organization defines (empty = free text). */
  async notdienstBereiche(organizationId: string): Promise<string[]> {
    const row = await this.db('organizations').where({ id: organizationId }).first('notdienst_bereiche');
    return (row?.notdienst_bereiche as string[] | undefined) ?? [];
  }
}
