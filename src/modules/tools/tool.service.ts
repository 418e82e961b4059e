import type { Knex } from 'knex';
import type { AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { lockAgent } from '../../db/locks.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/pg-errors.js';
import { ConflictError, ValidationError, type ErrorDetail } from '../../errors/index.js';
import { zodIssuesToDetails } from '../../errors/zod.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import { bodyField, uuidField } from '../../api/validate.js';
import type { AgentVersionRecorder } from '../agent-versions/agent-version.recorder.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { currentForWrite, found, type AgentRef } from '../agents/agent-items.js';
import { checkedWrite, NO_CHANGE_GUARD, type AgentChangeGuard } from '../agents/agent-change-guard.js';
import { TOOL_CONFIG_SCHEMAS, TOOL_TYPES, type ToolConfig, type ToolType } from './tool-config.schemas.js';
import type { ToolReferences } from './tool-references.js';
import {
  TOOL_EMPLOYEE_FK,
  TOOL_NAME_UNIQUE,
  type Tool,
  type ToolFields,
  type ToolRepository,
} from './tool.repository.js';
import { CreateToolSchema, UpdateToolSchema } from './tool.schemas.js';
import { mergePatch } from './merge-patch.js';
import { stepsNamingTool } from './workflow-tools.js';

/**
 * The body's config checked against its type's schema (a config that is not an object at all is
 * reported by the body schema). `value` is undefined when the config was refused.
 */
function parseConfig(toolType: ToolType, raw: unknown): { value?: ToolConfig; details: ErrorDetail[] } {
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) return { details: [] };
  const result = TOOL_CONFIG_SCHEMAS[toolType].safeParse(raw ?? {});
  if (result.success) return { value: result.data as ToolConfig, details: [] };
  return { details: zodIssuesToDetails(result.error.issues, ['config']) };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether the request's own config names a phone number (not one taken over from the stored config). */
function sendsPhone(config: unknown): boolean {
  return isPlainObject(config) && config.phone_number !== undefined && config.phone_number !== null;
}

function conflictError(conflict: ErrorDetail): ConflictError {
  return new ConflictError("The tool's phone number comes from its linked employee", [conflict]);
}

function toolTypeOf(body: unknown): ToolType | undefined {
  const type = bodyField(body, 'tool_type');
  return TOOL_TYPES.includes(type as ToolType) ? (type as ToolType) : undefined;
}

/** Reference problems on a field that the schema already refused would only repeat it. */
function merge(schema: ErrorDetail[], references: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set(schema.map((d) => d.field));
  return [...schema, ...references.filter((d) => !seen.has(d.field))];
}

export class ToolService {
  constructor(
    private readonly audited: AuditedTransactions,
    private readonly tools: ToolRepository,
    private readonly references: ToolReferences,
    private readonly access: AgentAccess,
    private readonly versions: AgentVersionRecorder,
    private readonly clock: Clock,
    private readonly guard: AgentChangeGuard = NO_CHANGE_GUARD,
  ) {}

  async list(auth: AuthContext, agentId: string): Promise<{ data: Tool[] }> {
    const agent = await this.access.resolve(auth, agentId, 'tools:read');
    return { data: await this.tools.list(agent.id) };
  }

  async get(auth: AuthContext, agentId: string, toolId: string): Promise<Tool> {
    const agent = await this.access.resolve(auth, agentId, 'tools:read');
    return found(await this.tools.find(agent.id, toolId), 'Tool');
  }

  /** Every problem of the body (fields, config of its type, employee, target agent, URL) in one 400. */
  async create(auth: AuthContext, agentId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.access.resolve(auth, agentId, 'tools:write');
    const fields = await this.validateNew(auth, agent, body);
    if (await this.tools.nameTaken(agent.id, fields.name)) throw this.nameConflict(fields.name);
    const written = await checkedWrite(this.audited, this.guard, agent, conditions.dryRun, async (trx) => {
      // Lock order (src/db/locks.ts): the agent row, then the new tool row.
      await lockAgent(trx, agent);
      const tools = this.tools.with(trx);
      const created = await this.guardName(fields.name, () => tools.insert(agent, fields, this.clock.now()));
      const tool = (created.employee_id && (await tools.adoptEmployeePhone(agent.id, created.id))) || created;
      await this.versions.record(trx, agent, auth, 'tool.created');
      return tool;
    });
    // A routed call reads the agent's tools: every instance's cache has dropped them when the write answers.
    if (!conditions.dryRun) await this.access.changed();
    return written;
  }

  /**
   * The create rules over `body` (fields, config of its type, employee, target agent, URL): the
   * tool's fields, or a 400 listing every problem. Restoring a version checks its tools the same way.
   */
  async validateNew(auth: AuthContext, agent: AgentRef, body: unknown): Promise<ToolFields> {
    const base = CreateToolSchema.safeParse(body ?? {});
    const toolType = toolTypeOf(body);
    const config = toolType ? parseConfig(toolType, bodyField(body, 'config')) : { details: [] };
    const employeeId = uuidField().safeParse(bodyField(body, 'employee_id'));
    const refs = toolType
      ? await this.references.check(auth, agent, {
          toolType,
          employee: { id: employeeId.success ? employeeId.data : null, changed: true },
          config: config.value ? { value: config.value, changed: true } : null,
          phoneSent: sendsPhone(bodyField(body, 'config')),
        })
      : { details: [], config: {}, conflict: null };
    const details = merge(
      [...(base.success ? [] : zodIssuesToDetails(base.error.issues)), ...config.details],
      refs.details,
    );
    if (details.length > 0 || !base.success) throw new ValidationError('Request body is invalid', details);
    if (refs.conflict) throw conflictError(refs.conflict);
    return { ...base.data, config: refs.config } as ToolFields;
  }

  /**
   * `config` is merged into the stored one (null removes a field) and the result validated as a
   * whole; a rename is refused while the workflow names the tool. `If-Match` is checked against the
   * locked row; a dry run answers the same and stores nothing.
   */
  async update(auth: AuthContext, agentId: string, toolId: string, body: unknown, conditions: WriteConditions) {
    const agent = await this.access.resolve(auth, agentId, 'tools:write');
    const tool = found(await this.tools.find(agent.id, toolId), 'Tool');
    const base = UpdateToolSchema.safeParse(body ?? {});
    const input = base.success ? base.data : {};
    const sentConfig = bodyField(body, 'config');
    const configSent = sentConfig !== undefined;
    const config = configSent
      ? parseConfig(tool.tool_type, isPlainObject(sentConfig) ? mergePatch(tool.config, sentConfig) : sentConfig)
      : { details: [] };
    const employeeChanged = input.employee_id !== undefined;
    const refs = await this.references.check(auth, agent, {
      toolType: tool.tool_type,
      employee: { id: employeeChanged ? (input.employee_id ?? null) : tool.employee_id, changed: employeeChanged },
      config: !configSent
        ? { value: tool.config, changed: false }
        : config.value
          ? { value: config.value, changed: true }
          : null,
      phoneSent: sendsPhone(sentConfig),
    });
    const typeChange: ErrorDetail[] =
      input.tool_type !== undefined && input.tool_type !== tool.tool_type
        ? [{ field: 'tool_type', message: 'The tool type cannot be changed' }]
        : [];
    const details = merge(
      [...(base.success ? [] : zodIssuesToDetails(base.error.issues)), ...config.details, ...typeChange],
      refs.details,
    );
    if (details.length > 0) throw new ValidationError('Request body is invalid', details);
    if (refs.conflict) throw conflictError(refs.conflict);
    const { tool_type: _type, config: _config, ...changes } = input;
    const fields: Partial<ToolFields> = {
      ...changes,
      ...(config.value !== undefined || employeeChanged ? { config: refs.config } : {}),
    };
    const written = await checkedWrite(this.audited, this.guard, agent, conditions.dryRun, async (trx) => {
      // Lock order (src/db/locks.ts): the agent row, then the tool row.
      await lockAgent(trx, agent);
      await this.lockForWrite(trx, agent, tool.id, conditions);
      if (fields.name !== undefined && fields.name !== tool.name)
        await this.assertRenamable(trx, agent, tool, fields.name);
      const written = await this.guardName(fields.name ?? tool.name, () =>
        this.tools.with(trx).update(agent.id, tool.id, fields, this.clock.now()),
      );
      const updated = found(written, 'Tool');
      const adopted =
        (updated.employee_id && (await this.tools.with(trx).adoptEmployeePhone(agent.id, updated.id))) || updated;
      await this.versions.record(trx, agent, auth, 'tool.updated');
      return adopted;
    });
    if (!conditions.dryRun) await this.access.changed();
    return written;
  }

  /** 409 while the agent's workflow names the tool. */
  async delete(auth: AuthContext, agentId: string, toolId: string, conditions: WriteConditions): Promise<void> {
    const agent = await this.access.resolve(auth, agentId, 'tools:write');
    await this.audited.transaction(async (trx) => {
      const tools = this.tools.with(trx);
      // Lock order (src/db/locks.ts): the agent row (lockWorkflow), then the tool row.
      const workflow = await tools.lockWorkflow(agent.id, agent.organization_id);
      const tool = await this.lockForWrite(trx, agent, toolId, conditions);
      this.assertNotInWorkflow(workflow, tool.name, 'deleted');
      await tools.delete(agent.id, tool.id);
      await this.versions.record(trx, agent, auth, 'tool.deleted');
      await this.guard.check(trx, agent);
    });
    await this.access.changed();
  }

  /** The tool's row locked for this write, after its `If-Match` (412) and the organization's rule (428). */
  private async lockForWrite(trx: Knex.Transaction, agent: AgentRef, toolId: string, conditions: WriteConditions) {
    return currentForWrite(trx, agent, conditions, 'Tool', await this.tools.with(trx).findForUpdate(agent.id, toolId));
  }

  private async assertRenamable(trx: Knex.Transaction, agent: AgentRef, tool: Tool, name: string): Promise<void> {
    const tools = this.tools.with(trx);
    this.assertNotInWorkflow(await tools.lockWorkflow(agent.id, agent.organization_id), tool.name, 'renamed');
    if (await tools.nameTaken(agent.id, name, tool.id)) throw this.nameConflict(name);
  }

  private assertNotInWorkflow(workflow: unknown, name: string, action: 'deleted' | 'renamed'): void {
    const steps = stepsNamingTool(workflow, name);
    if (steps.length > 0) {
      throw new ConflictError(`Tool "${name}" is used by the agent's workflow and cannot be ${action}`, [
        { field: 'name', message: `Named in workflow steps: ${steps.join(', ')}` },
      ]);
    }
  }

  private nameConflict(name: string): ConflictError {
    return new ConflictError(`A tool named "${name}" already exists for this agent`, [
      { field: 'name', message: 'Already in use' },
    ]);
  }

  /** A concurrent request may take the name, or delete the employee, between the check and the write. */
  private async guardName<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error, TOOL_NAME_UNIQUE)) throw this.nameConflict(name);
      // The linked employee was deleted after the reference check.
      if (isForeignKeyViolation(error, TOOL_EMPLOYEE_FK)) {
        throw new ValidationError('Request body is invalid', [
          { field: 'employee_id', message: 'Employee not found for this agent' },
        ]);
      }
      throw error;
    }
  }
}
