import type { Knex } from 'knex';
import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { lockAgent } from '../../db/locks.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/index.js';
import type { EventRecorder } from '../../events/event-recorder.js';
import type { AgentVersionRecorder } from '../agent-versions/agent-version.recorder.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import type { Page } from '../../api/pagination.js';
import { parse, parseBody } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { currentForWrite, found, type AgentRef } from '../agents/agent-items.js';
import { checkedWrite, NO_CHANGE_GUARD, type AgentChangeGuard } from '../agents/agent-change-guard.js';
import type { ToolRepository } from '../tools/tool.repository.js';
import { EMPLOYEE_STATUS_EVENT, employeeStatusPayload } from './employee-event.js';
import type { Employee, EmployeeFields, EmployeeRepository } from './employee.repository.js';
import {
  CreateEmployeeSchema,
  ListEmployeesQuery,
  UpdateEmployeeSchema,
  type EmployeeStatus,
  type UpdateEmployeeInput,
} from './employee.schemas.js';

/** What EmployeeService is built from, passed by name by its module file. */
export type EmployeeServiceDeps = {
  audited: AuditedTransactions;
  employees: EmployeeRepository;
  tools: ToolRepository;
  access: AgentAccess;
  events: EventRecorder;
  clock: Clock;
  versions: AgentVersionRecorder;
  guard?: AgentChangeGuard;
};

export class EmployeeService {
  private readonly guard: AgentChangeGuard;

  constructor(private readonly deps: EmployeeServiceDeps) {
    this.guard = deps.guard ?? NO_CHANGE_GUARD;
  }

  /** Alphabetical by name; filters `status` and `active`. */
  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<Employee>> {
    const agent = await this.deps.access.resolve(auth, agentId, 'employees:read');
    const { page, limit, ...filters } = parse(ListEmployeesQuery, query, 'Invalid query parameters');
    return this.deps.employees.list(agent.id, filters, { page, limit });
  }

  async get(auth: AuthContext, agentId: string, employeeId: string): Promise<Employee> {
    const agent = await this.deps.access.resolve(auth, agentId, 'employees:read');
    return found(await this.deps.employees.find(agent.id, employeeId), 'Employee');
  }

  async create(auth: AuthContext, agentId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.deps.access.resolve(auth, agentId, 'employees:write');
    const input = parseBody(CreateEmployeeSchema, body);
    await this.checkNotdienst(this.deps.employees, agent, input.status, input.notdienst_bereich, true);
    const written = await checkedWrite(this.deps.audited, this.guard, agent, conditions.dryRun, (trx) =>
      this.deps.employees.with(trx).insert(agent.id, input, this.deps.clock.now()),
    );
    // A routed call reads the agent's employees: every instance's cache has dropped them when the write answers.
    if (!conditions.dryRun) await this.deps.access.changed();
    return written;
  }

  /**
   * A change of `status` records the `employee.forwarding_created` event in the same transaction;
   * leaving `notdienst` clears `notdienst_bereich`; a new phone number flows into linked transfer tools.
   * `If-Match` is checked against the locked row; a dry run answers the same and stores nothing.
   */
  async update(auth: AuthContext, agentId: string, employeeId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.deps.access.resolve(auth, agentId, 'employees:write');
    found(await this.deps.employees.find(agent.id, employeeId), 'Employee');
    const input = parseBody(UpdateEmployeeSchema, body);
    const written = await checkedWrite(this.deps.audited, this.guard, agent, conditions.dryRun, async (trx) => {
      const employees = this.deps.employees.with(trx);
      // Lock order (src/db/locks.ts): the agent row, then the employee row, then its linked tools.
      await lockAgent(trx, agent);
      const locked = await employees.findForUpdate(agent.id, employeeId);
      const current = await currentForWrite(trx, agent, conditions, 'Employee', locked);
      const changes = await this.changesFor(trx, agent, current, input);
      const updated = found(await employees.update(agent.id, employeeId, changes, this.deps.clock.now()), 'Employee');
      if (updated.phone_number && updated.phone_number !== current.phone_number) {
        const synced = await this.deps.tools
          .with(trx)
          .syncEmployeePhone(agent.id, employeeId, updated.phone_number, this.deps.clock.now());
        // The number is part of the linked tools' configuration: a new configuration version.
        if (synced > 0) await this.deps.versions.record(trx, agent, auth, 'tool.updated');
      }
      if (updated.status !== current.status) await this.recordStatusChange(trx, agent, updated, current.status, input);
      return updated;
    });
    if (!conditions.dryRun) await this.deps.access.changed();
    return written;
  }

  /** 409 while a transfer tool forwards to the employee. */
  async delete(auth: AuthContext, agentId: string, employeeId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.deps.access.resolve(auth, agentId, 'employees:write');
    found(await this.deps.employees.find(agent.id, employeeId), 'Employee');
    await this.deps.audited.transaction(async (trx) => {
      // Lock order (src/db/locks.ts): the agent row, then the employee row. Tool writes take the
      // agent row first too, so no tool can be linked between the check and the delete.
      await lockAgent(trx, agent);
      const locked = await this.deps.employees.with(trx).findForUpdate(agent.id, employeeId);
      await currentForWrite(trx, agent, conditions, 'Employee', locked);
      await this.assertNoLinkedTools(this.deps.tools.with(trx), agent.id, employeeId, 'deleted');
      if (!(await this.deps.employees.with(trx).delete(agent.id, employeeId))) throw new NotFoundError('Employee');
      await this.guard.check(trx, agent);
    });
    await this.deps.access.changed();
  }

  private async changesFor(
    trx: Knex.Transaction,
    agent: AgentRef,
    current: Employee,
    input: UpdateEmployeeInput,
  ): Promise<Partial<EmployeeFields>> {
    const { substitute: _s, responsibilities: _r, start_date: _d, reasons: _reasons, ...changes } = input;
    const status = changes.status ?? current.status;
    await this.checkNotdienst(
      this.deps.employees.with(trx),
      agent,
      status,
      changes.notdienst_bereich,
      changes.notdienst_bereich !== undefined,
    );
    if (status !== 'notdienst') changes.notdienst_bereich = null;
    if (changes.phone_number === null && current.phone_number !== null) {
      await this.assertNoLinkedTools(this.deps.tools.with(trx), agent.id, current.id, 'left without a phone number');
    }
    return changes;
  }

  /** `notdienst_bereich` only with status notdienst, and one of the organization's areas when it defines some. */
  private async checkNotdienst(
    employees: EmployeeRepository,
    agent: AgentRef,
    status: EmployeeStatus,
    bereich: string | null | undefined,
    sent: boolean,
  ): Promise<void> {
    if (!sent || bereich === null || bereich === undefined) return;
    if (status !== 'notdienst') {
      throw new ValidationError('Request body is invalid', [
        { field: 'notdienst_bereich', message: 'Only allowed while status is notdienst' },
      ]);
    }
    const areas = await employees.notdienstBereiche(agent.organization_id);
    if (areas.length > 0 && !areas.includes(bereich)) {
      throw new ValidationError('Request body is invalid', [
        { field: 'notdienst_bereich', message: `Must be one of the organization's areas: ${areas.join(', ')}` },
      ]);
    }
  }

  private async recordStatusChange(
    trx: Knex.Transaction,
    agent: AgentRef & { name: string },
    employee: Employee,
    previousStatus: EmployeeStatus,
    input: UpdateEmployeeInput,
  ): Promise<void> {
    const payload = employeeStatusPayload({
      employee,
      previousStatus,
      agentName: agent.name,
      details: input,
      at: this.deps.clock.now(),
    });
    await this.deps.events.record(trx, {
      organization_id: agent.organization_id,
      agent_id: agent.id,
      type: EMPLOYEE_STATUS_EVENT,
      payload,
    });
  }

  private async assertNoLinkedTools(
    tools: ToolRepository,
    agentId: string,
    employeeId: string,
    action: string,
  ): Promise<void> {
    const names = await tools.namesLinkedToEmployee(agentId, employeeId);
    if (names.length > 0) {
      throw new ConflictError(`The employee is linked to transfer tools and cannot be ${action}`, [
        { field: 'employee_id', message: `Linked tools: ${names.join(', ')}` },
      ]);
    }
  }
}
