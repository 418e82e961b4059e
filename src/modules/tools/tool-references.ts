import { isAgentAllowed, type AgentRef, type AuthContext } from '../../auth/auth-context.js';
import { AgentNotAccessibleError, type ErrorDetail } from '../../errors/index.js';
import { outgoingUrlProblem } from '../../outgoing/url-policy.js';
import type { AgentRepository } from '../agents/agent.repository.js';
import type { EmployeeRepository } from '../employees/employee.repository.js';
import { TRANSFER_TOOL_TYPES, type ToolConfig, type ToolType } from './tool-config.schemas.js';

export type ReferenceInput = {
  toolType: ToolType;
  /** The employee the tool will be linked to; `changed` when the request sets it. */
  employee: { id: string | null; changed: boolean };
  /**
   * The effective config; `changed` when the request sends one (only then are its targets checked).
   * null when the request sent a config its type's schema refused: nothing more to check in it.
   */
  config: { value: ToolConfig; changed: boolean } | null;
  /** The request's config names a phone_number itself (a linked tool may only repeat the employee's). */
  phoneSent?: boolean;
};

export type ReferenceResult = {
  details: ErrorDetail[];
  config: ToolConfig;
  /** A sent phone_number that differs from the linked employee's: a 409, not a 400. */
  conflict: ErrorDetail | null;
};

const IDENTIFY_CALLER_URLS = ['lookup_url', 'fetch_case_url', 'verify_plz_url'] as const;

/**
 * The checks of a tool that need the database or the deployment's URL policy: the employee link,
 * the switch_agent target and the http_request URL. Returns every problem and the config to store
 * (a linked transfer tool takes the employee's phone number).
 */
export class ToolReferences {
  constructor(
    private readonly employees: EmployeeRepository,
    private readonly agents: AgentRepository,
    private readonly allowPrivateTargets: boolean,
  ) {}

  async check(auth: AuthContext, agent: AgentRef, input: ReferenceInput): Promise<ReferenceResult> {
    const details: ErrorDetail[] = [];
    let config = input.config?.value ?? {};
    let conflict: ErrorDetail | null = null;
    const configChanged = input.config?.changed === true;
    if (input.employee.id !== null && (input.employee.changed || configChanged)) {
      const phone = await this.employeePhone(agent, input.toolType, input.employee.id, details);
      if (phone && input.phoneSent && config.phone_number !== undefined && config.phone_number !== phone) {
        conflict = {
          field: 'config.phone_number',
          message: `The tool is linked to an employee and takes the employee's number (${phone}); unlink it (employee_id: null) to set another`,
        };
      }
      if (phone) config = { ...config, phone_number: phone };
    }
    if (input.config === null) return { details, config, conflict };
    if (configChanged || input.employee.changed) {
      const isTransfer = TRANSFER_TOOL_TYPES.includes(input.toolType);
      if (isTransfer && input.employee.id === null && typeof config.phone_number !== 'string') {
        details.push({
          field: 'config.phone_number',
          message: 'Required unless the tool is linked to an employee (employee_id)',
        });
      }
    }
    if (configChanged) {
      if (input.toolType === 'switch_agent')
        await this.checkTarget(auth, agent, String(config.target_agent_id), details);
      if (input.toolType === 'http_request') {
        const problem = outgoingUrlProblem(String(config.url), { allowPrivate: this.allowPrivateTargets });
        if (problem) details.push({ field: 'config.url', message: problem });
      }
      if (input.toolType === 'identify_caller') {
        for (const name of IDENTIFY_CALLER_URLS) {
          if (typeof config[name] !== 'string') continue;
          const problem = outgoingUrlProblem(config[name], { allowPrivate: this.allowPrivateTargets });
          if (problem) details.push({ field: `config.${name}`, message: problem });
        }
      }
    }
    return { details, config, conflict };
  }

  private async employeePhone(
    agent: AgentRef,
    toolType: ToolType,
    employeeId: string,
    details: ErrorDetail[],
  ): Promise<string | null> {
    if (!TRANSFER_TOOL_TYPES.includes(toolType)) {
      details.push({
        field: 'employee_id',
        message: `Only ${TRANSFER_TOOL_TYPES.join(' and ')} tools can be linked to an employee`,
      });
      return null;
    }
    const employee = await this.employees.find(agent.id, employeeId);
    if (!employee) details.push({ field: 'employee_id', message: 'Employee not found for this agent' });
    else if (!employee.phone_number)
      details.push({ field: 'employee_id', message: 'The employee has no phone number' });
    return employee?.phone_number ?? null;
  }

  /**
   * A key scoped to some agents gets the 403 it gets for the target itself when the target is outside
   * its scope, before any lookup: whether the id exists is none of its business.
   */
  private async checkTarget(
    auth: AuthContext,
    agent: AgentRef,
    targetId: string,
    details: ErrorDetail[],
  ): Promise<void> {
    if (!isAgentAllowed(auth, targetId)) throw new AgentNotAccessibleError();
    if (targetId === agent.id) {
      details.push({ field: 'config.target_agent_id', message: 'Must be another agent than this one' });
      return;
    }
    if (!(await this.agents.findRef(targetId, [agent.organization_id]))) {
      details.push({ field: 'config.target_agent_id', message: 'Agent not found in this organization' });
    }
  }
}
