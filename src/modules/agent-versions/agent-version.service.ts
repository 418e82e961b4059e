import type { Knex } from 'knex';
import { assertPermission, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { AuditedTransactions } from '../../audit/audited-transactions.js';
import { AppError, ConflictError, NotFoundError, type ErrorDetail } from '../../errors/index.js';
import type { WriteConditions } from '../../api/entity-tag.js';
import type { Page } from '../../api/pagination.js';
import { parse } from '../../api/validate.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { NO_CHANGE_GUARD, type AgentChangeGuard } from '../agents/agent-change-guard.js';
import type { AgentRepository, AgentRow } from '../agents/agent.repository.js';
import { agentUpdateError } from '../agents/agent-write-errors.js';
import type { AgentService } from '../agents/agent.service.js';
import type { Tool, ToolFields, ToolRepository } from '../tools/tool.repository.js';
import type { ToolService } from '../tools/tool.service.js';
import { validateWorkflow } from '../workflows/workflow-rules.js';
import type { WorkflowRepository } from '../workflows/workflow.repository.js';
import type { Workflow } from '../workflows/workflow.schemas.js';
import {
  CONFIGURATION_AGENT_FIELDS,
  CONFIGURATION_TOOL_FIELDS,
  diffConfigurations,
  type AgentConfiguration,
  type ConfigurationChange,
  type ToolSnapshot,
} from './agent-configuration.js';
import type { AgentVersionRecorder } from './agent-version.recorder.js';
import type { AgentVersionRepository, AgentVersionRow } from './agent-version.repository.js';
import { listVersionsQuery, type AgentVersionSummary } from './agent-version.schemas.js';

type VersionResponse = AgentVersionSummary & { configuration: AgentConfiguration };

function summary(row: Omit<AgentVersionRow, 'configuration'>): AgentVersionSummary {
  return {
    agent_id: row.agent_id,
    version: row.version,
    change: row.change as AgentVersionSummary['change'],
    restored_from: row.restored_from,
    actor: { type: row.actor_type, user_id: row.actor_user_id, key_prefix: row.actor_key_prefix },
    request_id: row.request_id,
    created_at: row.created_at.toISOString(),
  };
}

function prefixed(error: unknown, prefix: string): ErrorDetail[] {
  if (!(error instanceof AppError) || error.status !== 400) throw error;
  return (error.details ?? [{ field: '', message: error.message }]).map((d) => ({
    field: d.field ? `${prefix}${d.field}` : prefix.replace(/\.$/, ''),
    message: d.message,
  }));
}

function toolBody(tool: ToolSnapshot): Record<string, unknown> {
  const { id: _id, ...fields } = tool;
  return fields;
}

/** What AgentVersionService is built from, passed by name by its module file. */
export type AgentVersionServiceDeps = {
  audited: AuditedTransactions;
  versions: AgentVersionRepository;
  recorder: AgentVersionRecorder;
  tools: ToolRepository;
  agents: AgentRepository;
  workflows: WorkflowRepository;
  agentService: AgentService;
  toolService: ToolService;
  access: AgentAccess;
  clock: Clock;
  guard?: AgentChangeGuard;
};

/** Reading versions and diffs (agents:read), and restoring one (agents:write). */
export class AgentVersionService {
  private readonly guard: AgentChangeGuard;

  constructor(private readonly deps: AgentVersionServiceDeps) {
    this.guard = deps.guard ?? NO_CHANGE_GUARD;
  }

  async list(auth: AuthContext, agentId: string, query: unknown): Promise<Page<AgentVersionSummary>> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    const page = parse(listVersionsQuery, query ?? {}, 'Invalid query parameters');
    const result = await this.deps.versions.list(agent.id, agent.organization_id, page);
    return { data: result.data.map(summary), pagination: result.pagination };
  }

  async get(auth: AuthContext, agentId: string, version: number): Promise<VersionResponse> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    const row = await this.find(agent, version);
    return { ...summary(row), configuration: row.configuration };
  }

  async diff(
    auth: AuthContext,
    agentId: string,
    from: number,
    to: number,
  ): Promise<{ agent_id: string; from: number; to: number; changes: ConfigurationChange[] }> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:read');
    const [a, b] = [await this.find(agent, from), await this.find(agent, to)];
    return { agent_id: agent.id, from, to, changes: diffConfigurations(a.configuration, b.configuration) };
  }

  /**
   * Makes version `n`'s configuration current in one transaction, recorded as a new version: agent
   * fields through the PATCH rules, tools through the create rules (tools gone since are recreated
   * with their ids, tools added since are removed), the workflow through the workflow rules. Any
   * problem (say, an employee deleted since) is a 409 listing them all, and nothing changes.
   */
  /** `If-Match` takes the agent's ETag, checked against the locked agent as a PATCH is. */
  async restore(
    auth: AuthContext,
    agentId: string,
    version: number,
    conditions: WriteConditions,
  ): Promise<VersionResponse> {
    const agent = await this.deps.access.resolve(auth, agentId, 'agents:write');
    const target = (await this.find(agent, version)).configuration;
    const current = await this.deps.tools.list(agent.id);
    const targetTools = target.tools ?? [];
    if (toolsKey(current) !== toolsKey(targetTools)) assertPermission(auth, 'tools:write', agent.organization_id);

    const details: ErrorDetail[] = [];
    const fields = await this.deps.agentService
      .validatePatch(auth, agent, agentFieldsOf(target))
      .catch((error: unknown) => (details.push(...prefixed(error, '')), {}));
    const tools: { snapshot: ToolSnapshot; fields: ToolFields }[] = [];
    for (const [i, snapshot] of targetTools.entries()) {
      const checked = await this.deps.toolService
        .validateNew(auth, agent, toolBody(snapshot))
        .catch((error: unknown) => (details.push(...prefixed(error, `tools[${i}].`)), undefined));
      if (checked) tools.push({ snapshot, fields: checked });
    }
    let workflow: Workflow | null = null;
    if (target.workflow !== null && target.workflow !== undefined) {
      const result = validateWorkflow(target.workflow, new Set(targetTools.map((t) => t.name)));
      details.push(...result.details.map((d) => ({ field: `workflow.${d.field}`, message: d.message })));
      workflow = result.workflow ?? null;
    }
    if (details.length > 0)
      throw new ConflictError(`Version ${version} cannot be restored: it no longer passes validation`, details);

    const restored = await this.deps.audited.transaction(async (trx) => {
      await this.deps.agentService.lockForWrite(trx, agent, conditions);
      const now = this.deps.clock.now();
      const row = await this.deps.agents
        .with(trx)
        .update(agent.id, agent.organization_id, { ...fields, updated_at: now })
        .catch((error: unknown) => {
          throw agentUpdateError(error);
        });
      if (!row) throw new NotFoundError('Agent');
      await this.replaceTools(trx, agent, tools, now);
      await this.deps.workflows.with(trx).save(agent.id, agent.organization_id, workflow, now);
      const number = await this.deps.recorder.record(trx, agent, auth, 'version.restored', version);
      if (number === undefined) throw new NotFoundError('Agent');
      await this.guard.check(trx, agent);
      return number;
    });
    await this.deps.access.changed();
    // Answered without asking for agents:read: the restore is done, and agents:write allowed it.
    const row = await this.find(agent, restored);
    return { ...summary(row), configuration: row.configuration };
  }

  /** Every current tool goes; the version's tools come back with their ids (and creation times when known). */
  private async replaceTools(
    trx: Knex.Transaction,
    agent: AgentRow,
    tools: { snapshot: ToolSnapshot; fields: ToolFields }[],
    now: Date,
  ): Promise<void> {
    const repository = this.deps.tools.with(trx);
    const existing = new Map<string, Tool>((await repository.list(agent.id)).map((t) => [t.id, t]));
    for (const tool of existing.values()) await repository.delete(agent.id, tool.id);
    for (const { snapshot, fields } of tools) {
      const createdAt = existing.get(snapshot.id)?.created_at ?? now;
      await repository.insert(agent, fields, now, { id: snapshot.id, created_at: createdAt });
    }
  }

  private async find(agent: AgentRow, version: number): Promise<AgentVersionRow> {
    const row = await this.deps.versions.find(agent.id, agent.organization_id, version);
    if (!row) throw new NotFoundError('Agent version');
    return row;
  }
}

/**
 * The version's agent fields; a field added to agents after the version was taken keeps its value.
 * So does `require_passing_test_cases`: a restore must not switch off the guard that checks it.
 */
function agentFieldsOf(configuration: AgentConfiguration): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of CONFIGURATION_AGENT_FIELDS) {
    if (name in configuration && name !== 'require_passing_test_cases') out[name] = configuration[name];
  }
  return out;
}

/** The tools as comparable text: same ids with the same fields. */
function toolsKey(tools: readonly (ToolSnapshot | Tool)[]): string {
  const rows = tools.map((tool) => CONFIGURATION_TOOL_FIELDS.map((f) => (tool as Record<string, unknown>)[f] ?? null));
  return JSON.stringify(rows.sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
}
